import { connect } from 'node:net';

/** A malformed request written byte for byte on a fresh socket, and what its answer must be. */
export interface RawCase {
  name: string;
  /** The whole request as sent ({{token}} and {{sessionId}} are filled in). */
  text: string;
  /** The one status the answer must have, when the contract fixes it. */
  expectStatus?: number;
}

/** The parsed answer to a raw request (status 0: the server closed the socket without answering). */
export interface RawAnswer {
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

const LONG = 'a'.repeat(20_000);

/**
 * Requests an HTTP client library would refuse to send, or that reach the server's framework before its
 * routes (issue 14: bad URL encoding, long ids, large headers, bad header bytes, unknown methods, bad
 * chunking, bad JSON). Each must be answered in our error shape with a status below 500.
 */
export function rawCases(full: boolean): RawCase[] {
  const auth = 'Authorization: Bearer {{token}}\r\n';
  const host = 'Host: 127.0.0.1\r\n';
  const json = (body: string): string =>
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const cases: RawCase[] = [
    { name: 'overlong UTF-8 in the path (%C0%AE)', text: `GET /v1/sessions/%C0%AE HTTP/1.1\r\n${host}${auth}\r\n` },
    { name: 'bad percent-encoding (%zz)', text: `GET /v1/sessions/%zz HTTP/1.1\r\n${host}${auth}\r\n` },
    { name: 'session id of 20,000 characters', text: `GET /v1/sessions/${LONG} HTTP/1.1\r\n${host}${auth}\r\n` },
    {
      name: 'header block over 16 KiB (431)',
      text: `GET /v1/sessions HTTP/1.1\r\n${host}${auth}X-Big: ${LONG}\r\n\r\n`,
    },
    { name: 'NUL byte in a header value', text: `GET /v1/sessions HTTP/1.1\r\n${host}${auth}X-Bad: a\u0000b\r\n\r\n` },
    { name: 'unsupported method (PROPFIND)', text: `PROPFIND /v1/sessions HTTP/1.1\r\n${host}${auth}\r\n` },
    { name: 'malformed JSON body', text: `POST /v1/sessions HTTP/1.1\r\n${host}${auth}${json('{"workspace":')}` },
    { name: 'JSON body that is not an object', text: `POST /v1/sessions HTTP/1.1\r\n${host}${auth}${json('[1,2,3]')}` },
    {
      name: 'unsupported content type',
      text: `POST /v1/sessions HTTP/1.1\r\n${host}${auth}Content-Type: text/xml\r\nContent-Length: 7\r\n\r\n<a></a>`,
    },
    {
      name: 'malformed chunked body',
      text: `POST /v1/sessions HTTP/1.1\r\n${host}${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    },
    { name: 'unknown route', text: `GET /v1/no-such-route HTTP/1.1\r\n${host}${auth}\r\n` },
    {
      name: 'unauthenticated POST with a malformed body (401 before parsing)',
      text: `POST /v1/sessions HTTP/1.1\r\n${host}${json('{"workspace":')}`,
      expectStatus: 401,
    },
    {
      name: 'bad bearer token',
      text: `GET /v1/sessions HTTP/1.1\r\n${host}Authorization: Bearer nope\r\n\r\n`,
      expectStatus: 401,
    },
    {
      name: 'run input of the wrong type',
      text: `POST /v1/sessions/{{sessionId}}/runs HTTP/1.1\r\n${host}${auth}${json('{"input":42}')}`,
    },
  ];
  if (full) {
    cases.push(
      {
        name: 'body over the body limit',
        text: `POST /v1/sessions/{{sessionId}}/runs HTTP/1.1\r\n${host}${auth}${json(JSON.stringify({ input: 'x'.repeat(2 * 1024 * 1024) }))}`,
      },
      {
        name: 'double-encoded traversal in the path',
        text: `GET /v1/sessions/%252e%252e%252f HTTP/1.1\r\n${host}${auth}\r\n`,
      },
      {
        name: 'query string with invalid encoding',
        text: `GET /v1/sessions/{{sessionId}}/history?limit=%E0%A4%A HTTP/1.1\r\n${host}${auth}\r\n`,
      },
    );
  }
  return cases;
}

/** Sends one raw request to host:port (in 64 KiB pieces, stopping once an answer arrives) and reads the first response (closing after it, or after 15 s). */
export function sendRaw(host: string, port: number, text: string): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks)));
    };
    socket.setTimeout(15_000, finish);
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (complete(Buffer.concat(chunks))) finish();
    });
    socket.once('connect', () => {
      // Like a real client, stop sending a large body once the server has answered (a 413 comes early).
      const bytes = Buffer.from(text, 'latin1');
      // One piece at a time, reading between pieces: a write into a socket the server has closed after
      // answering would fail (EPIPE) before the answer waiting in the receive buffer is read.
      const writeFrom = (offset: number): void => {
        if (offset >= bytes.length || chunks.length > 0 || done) return;
        socket.write(bytes.subarray(offset, offset + 65_536), () => setTimeout(() => writeFrom(offset + 65_536), 2));
      };
      writeFrom(0);
    });
  });
}

function splitHead(data: Buffer): { head: string; body: Buffer } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  return { head: data.subarray(0, end).toString('latin1'), body: data.subarray(end + 4) };
}

function complete(data: Buffer): boolean {
  const parts = splitHead(data);
  if (parts === undefined) return false;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(parts.head);
  if (length?.[1] !== undefined) return parts.body.length >= Number(length[1]);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(parts.head)) return parts.body.includes('0\r\n\r\n');
  return false;
}

function parseResponse(data: Buffer): RawAnswer {
  const parts = splitHead(data);
  if (parts === undefined) return { status: 0, contentType: undefined, body: data };
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(parts.head)?.[1] ?? 0);
  const contentType = /\r\ncontent-type:\s*([^\r\n]+)/i.exec(parts.head)?.[1];
  let body = parts.body;
  if (/\r\ntransfer-encoding:\s*chunked/i.test(parts.head)) body = dechunk(body);
  return { status, contentType, body };
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let offset = 0;
  while (offset < data.length) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) break;
    const size = parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(out);
}
