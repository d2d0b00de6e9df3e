// Injection tokens of the core module, in a file of their own so providers the core module lists can import them.
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
