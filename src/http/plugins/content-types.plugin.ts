// Content types and input hygiene: JSON only, any `application/*+json` parsed as JSON, text bodies only where a
// route declares them (the iCalendar import's text/calendar), per-route body limits and raw bodies (RouteLimits),
// and a U+0000 in any string of the body, query or path refused with a 400 naming it.
import { Transform, type Readable } from 'node:stream';
import fp from 'fastify-plugin';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../../config/config.js';
import { PlatformError, PlatformErrorCode } from '../../errors/api-error.js';
import { noteJsonText, refuseNulCharacters } from '../../validation/nul-characters.js';
import { routeLimitsOf, type RouteLimitsOptions } from '../../route-config/route-limits.js';
import { appendRouteHooks } from './route-hooks.js';

/** Bodies above this size get a turn of the event loop between their parse and their validation. */
const LARGE_BODY_BYTES = 256 * 1024;

export interface ContentTypesOptions {
  config: AppConfig;
}

const contentTypes: FastifyPluginCallback<ContentTypesOptions> = (fastify, { config }, done) => {
  fastify.addHook('onRoute', (route) => {
    const limits = routeLimitsOf(route.config);
    if (limits === undefined) return;
    if (limits.bodyLimit !== undefined) route.bodyLimit = Math.max(limits.bodyLimit, config.bodyLimit);
    if (limits.rawBody === true) appendRouteHooks(route, 'preParsing', keepRawBody);
    if (limits.textBodies !== undefined)
      appendRouteHooks(route, 'preParsing', onlyMediaTypes(limits.textBodies));
    if (limits.bodyCheck !== undefined)
      appendRouteHooks(route, 'preParsing', checkedAsItArrives(limits.bodyCheck));
  });

  // JSON only: text/plain bodies are 415, and JSON media types such as application/scim+json parse as JSON.
  // The text is looked at before it is parsed: without a \u0000 or surrogate escape in it, the NUL check need not
  // walk the parsed body (nul-characters.ts).
  fastify.removeContentTypeParser(['text/plain', 'application/json']);
  const defaultJsonParser = fastify.getDefaultJsonParser('error', 'error');
  const jsonParser = (
    request: FastifyRequest,
    body: string,
    done: (error: Error | null, body?: unknown) => void,
  ): void => {
    noteJsonText(request, body);
    void defaultJsonParser(request, body, done);
  };
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    jsonParser(request, typeof body === 'string' ? body : body.toString('utf8'), done),
  );
  fastify.addContentTypeParser(
    // Fastify tests the whole header, parameters included (`application/scim+json; charset=utf-8`).
    /^application\/[\w.+-]+\+json\s*(?:;.*)?$/i,
    { parseAs: 'string' },
    (request, body, done) => {
      // Some provisioning clients send `Content-Type: application/scim+json` on GET and DELETE without a body.
      if (
        body === '' &&
        (request.method === 'GET' || request.method === 'DELETE' || request.method === 'HEAD')
      ) {
        done(null, undefined);
        return;
      }
      void jsonParser(request, typeof body === 'string' ? body : body.toString('utf8'), done);
    },
  );

  // Text bodies a route declares (RouteLimits textBodies: the iCalendar import's text/calendar) arrive as their
  // octets (a Buffer: the route decodes them per the charset parameter, after joining folds, RFC 5545 §3.1), under
  // the route's body limit; any other route answers them 415 like every unsupported type.
  fastify.addContentTypeParser(
    /^text\/calendar\s*(?:;.*)?$/i,
    { parseAs: 'buffer' },
    (request, body, done) => {
      const mediaType = 'text/calendar';
      if (routeLimitsOf(request.routeOptions.config)?.textBodies?.includes(mediaType) !== true) {
        done(
          new PlatformError(
            PlatformErrorCode.UnsupportedMediaType,
            `Content type ${mediaType} is not supported by ${request.method} ${request.url.split('?')[0]}; send application/json.`,
          ),
          undefined,
        );
        return;
      }
      done(null, body);
    },
  );

  // One place for every route: a U+0000 in any string of the body, the query or the path is a 400 naming it.
  fastify.addHook('preValidation', refuseNulCharacters);
  // Parsing a large body (operation 1's 50,000 ids: ~2 MiB, ~14 ms) is one turn of the event loop already: the
  // request's validation and handler start in the next, so other requests are served in between.
  fastify.addHook('preValidation', (request, _reply, next) => {
    if (Number(request.headers['content-length'] ?? 0) > LARGE_BODY_BYTES) setImmediate(next);
    else next();
  });
  done();
};

export const contentTypesPlugin = fp(contentTypes, { name: 'platform-content-types', fastify: '5.x' });

/**
 * preParsing hook of routes marked `rawBody`: passes the payload through unchanged to Fastify's parser and keeps
 * a copy of its bytes in `request.rawBody`, set before the parser sees the end of the body. Fastify still
 * enforces the body limit and Content-Length on what flows through.
 */
function keepRawBody(
  request: FastifyRequest & { rawBody?: Buffer },
  _reply: FastifyReply,
  payload: Readable,
  done: (error: Error | null, payload: Readable) => void,
): void {
  const chunks: Buffer[] = [];
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      request.rawBody = Buffer.concat(chunks);
      callback();
    },
  });
  payload.on('error', (error) => tee.destroy(error));
  done(null, payload.pipe(tee));
}

type PreParsingHook = (
  request: FastifyRequest,
  reply: FastifyReply,
  payload: Readable,
  done: (error: Error | null, payload?: Readable) => void,
) => void;

/**
 * preParsing hook of routes that take a text body type (RouteLimits textBodies): any other content type, JSON
 * included, or none is 415 before the body is read.
 */
function onlyMediaTypes(mediaTypes: readonly string[]): PreParsingHook {
  const accepted = new Set(mediaTypes.map((type) => type.toLowerCase()));
  const expected = mediaTypes.join(' or ');
  return (request, _reply, payload, done) => {
    const header = request.headers['content-type'];
    const essence = (header ?? '').split(';')[0].trim().toLowerCase();
    if (accepted.has(essence)) {
      done(null, payload);
      return;
    }
    done(
      new PlatformError(
        PlatformErrorCode.UnsupportedMediaType,
        `Content type ${header ?? '(none)'} is not supported; send ${expected}.`,
      ),
    );
  };
}

/**
 * preParsing hook of routes with a `bodyCheck`: each chunk passes the check before Fastify's parser collects it.
 * A refusal ends the parse with that error at once (one chunk's work, never the whole body's); the rest of the
 * body is read and dropped, so the client, still sending, gets the answer and the connection stays usable.
 */
function checkedAsItArrives(bodyCheck: NonNullable<RouteLimitsOptions['bodyCheck']>): PreParsingHook {
  return (request, _reply, payload, done) => {
    const check = bodyCheck(request);
    if (check === undefined) {
      done(null, payload);
      return;
    }
    const checked = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        try {
          check(chunk);
        } catch (error) {
          payload.unpipe(checked);
          payload.resume();
          callback(error as Error);
          return;
        }
        callback(null, chunk);
      },
    });
    payload.on('error', (error) => checked.destroy(error));
    done(null, payload.pipe(checked));
  };
}
