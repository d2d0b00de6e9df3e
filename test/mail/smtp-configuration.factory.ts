// A valid ensureSmtpConfiguration body; tests override what they are about.
export interface SmtpConfigurationBody {
  Context?: { Domain?: string | null } | null;
  Host?: unknown;
  Port?: unknown;
  Ssl?: unknown;
  AuthRequired?: unknown;
  Username?: unknown;
  Password?: unknown;
  InternalPassword?: unknown;
  SenderAddress?: unknown;
  Priority?: unknown;
  Enabled?: unknown;
  BCC?: unknown;
  AllowInvalidCertificate?: unknown;
  [other: string]: unknown;
}

export function smtpConfiguration(overrides: SmtpConfigurationBody = {}): SmtpConfigurationBody {
  return {
    Context: { Domain: 'contoso.example' },
    Host: '127.0.0.1',
    Port: 2525,
    Ssl: false,
    AuthRequired: true,
    Username: 'mailer',
    Password: 'Tr0ub4dor&3-not-in-any-log',
    InternalPassword: null,
    SenderAddress: 'Contoso Alerts <alerts@contoso.example>',
    Priority: 0,
    Enabled: true,
    BCC: [],
    ...overrides,
  };
}
