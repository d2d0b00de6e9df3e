// Loaded by jest before every spec file (setupFiles): decorator metadata must exist before any DTO/entity import.
import 'reflect-metadata';
