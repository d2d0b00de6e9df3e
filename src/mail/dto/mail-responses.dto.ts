import { ApiProperty } from '@nestjs/swagger';

const TLS_MODES = ['Implicit', 'StartTls', 'None'];

/** The interface document's ResultMessage. */
export class MailResultMessage {
  @ApiProperty({ example: true }) Succeeded!: boolean;
  @ApiProperty({ nullable: true, example: 'SMTP configuration smtp.example.com:587 (mailer) created.' })
  Message!: string | null;
  @ApiProperty({
    nullable: true,
    example: 'Created',
    description: 'Created | Updated | Unchanged (ensure); Removed | SmtpConfigurationNotFound (remove).',
  })
  Code!: string | null;
}

/** A stored configuration as it is shown: secrets only as Has… flags. */
export class SmtpConfigurationView {
  @ApiProperty({ example: 'contoso.example' }) Domain!: string;
  @ApiProperty({ example: 'smtp.example.com' }) Host!: string;
  @ApiProperty({ example: 587 }) Port!: number;
  @ApiProperty({ example: true }) Ssl!: boolean;
  @ApiProperty({ enum: TLS_MODES, example: 'StartTls', description: 'How Ssl and Port are applied.' })
  Tls!: string;
  @ApiProperty({ example: true }) AuthRequired!: boolean;
  @ApiProperty({ nullable: true, example: 'mailer@example.com' }) Username!: string | null;
  @ApiProperty({ example: true }) HasPassword!: boolean;
  @ApiProperty({ example: false }) HasInternalPassword!: boolean;
  @ApiProperty({ example: 'Contoso Alerts <alerts@contoso.example>' }) SenderAddress!: string;
  @ApiProperty({ example: 0 }) Priority!: number;
  @ApiProperty({ example: true }) Enabled!: boolean;
  @ApiProperty({ type: [String], example: ['archive@contoso.example'] }) BCC!: string[];
  @ApiProperty({ example: false }) AllowInvalidCertificate!: boolean;
  @ApiProperty({ example: '2026-11-22T02:15:31.000Z' }) CreatedAt!: string;
  @ApiProperty({ example: '2026-11-22T02:15:31.000Z' }) UpdatedAt!: string;
}

export class SmtpConfigurationListResponse extends MailResultMessage {
  @ApiProperty({
    type: [SmtpConfigurationView],
    description: 'Ordered by Priority, then Host, Port, Username.',
  })
  Result!: SmtpConfigurationView[];
}

export class SmtpVerification {
  @ApiProperty({ example: 'smtp.example.com' }) Host!: string;
  @ApiProperty({ example: 587 }) Port!: number;
  @ApiProperty({ nullable: true, example: 'mailer@example.com' }) Username!: string | null;
  @ApiProperty({ enum: TLS_MODES, example: 'StartTls' }) Tls!: string;
  @ApiProperty({ example: true, description: 'Whether the session logged in.' }) Authenticated!: boolean;
  @ApiProperty({ example: 182 }) DurationMs!: number;
}

export class VerifySmtpConfigurationResponse extends MailResultMessage {
  @ApiProperty({
    type: SmtpVerification,
    nullable: true,
    description: 'null when no configuration has that identity.',
  })
  Result!: SmtpVerification | null;
}

export class DeliveryAttempt {
  @ApiProperty({ example: 'smtp.example.com' }) Host!: string;
  @ApiProperty({ example: 587 }) Port!: number;
  @ApiProperty({ nullable: true, example: 'mailer@example.com' }) Username!: string | null;
  @ApiProperty({ example: 0 }) Priority!: number;
  @ApiProperty({ example: false }) Succeeded!: boolean;
  @ApiProperty({
    example: 'ConnectionRefused',
    description:
      'Sent | AuthenticationFailed | ConnectionRefused | HostNotFound | TlsFailed | TimedOut | ' +
      'ConnectionFailed | MessageRejected | SecretUnavailable | NotAttempted',
  })
  Code!: string;
  @ApiProperty({
    example: 'Connection refused by smtp.example.com:587: nothing accepts connections on that port.',
  })
  Message!: string;
  @ApiProperty({ example: 3 }) DurationMs!: number;
}

export class TestMessageDelivery {
  @ApiProperty({
    nullable: true,
    example: 'backup.example.com',
    description: 'The configuration that delivered.',
  })
  Host!: string | null;
  @ApiProperty({ nullable: true, example: 587 }) Port!: number | null;
  @ApiProperty({ nullable: true, example: 'mailer@example.com' }) Username!: string | null;
  @ApiProperty({ nullable: true, example: '<0f1c…@contoso.example>' }) MessageId!: string | null;
  @ApiProperty({
    type: [String],
    example: ['ops@contoso.example', 'archive@contoso.example'],
    description: 'Envelope recipients the server accepted (To and BCC).',
  })
  Accepted!: string[];
  @ApiProperty({ type: [DeliveryAttempt], description: 'Every configuration tried, in order.' })
  Attempts!: DeliveryAttempt[];
}

export class SendTestMessageResponse extends MailResultMessage {
  @ApiProperty({ type: TestMessageDelivery }) Result!: TestMessageDelivery;
}
