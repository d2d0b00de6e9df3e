import { ApiError } from '../errors/api-error.js';

export enum WebhookErrorCode {
  InstalledAppNotFound = 'InstalledAppNotFound',
}

export class WebhookError extends ApiError<WebhookErrorCode> {
  readonly status: number;

  private constructor(code: WebhookErrorCode, status: number, message: string) {
    super(code, message);
    this.status = status;
  }

  /** A resource addressed by path that does not exist is a 404, as on every route. */
  static installedAppNotFound(domain: string, installedAppId: string): WebhookError {
    return new WebhookError(
      WebhookErrorCode.InstalledAppNotFound,
      404,
      `No installed app "${installedAppId}" in domain "${domain}".`,
    );
  }
}
