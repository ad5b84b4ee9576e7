import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

/** What the oracle found wrong with one response (undefined: it is as documented). */
export interface ContractProblem {
  kind: 'server_error_5xx' | 'status_undocumented' | 'schema_mismatch' | 'content_type_mismatch' | 'unknown_operation';
  detail: string;
}

/** One operation of openapi.yaml: its method, path template and whether it needs a token. */
export interface OperationRef {
  method: string;
  template: string;
  secured: boolean;
}

interface OpenApiOperation {
  security?: unknown[];
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  security?: unknown[];
}

interface Route {
  ref: OperationRef;
  regex: RegExp;
  literalSegments: number;
  operation: OpenApiOperation;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

// ajv-formats is CommonJS (module.exports is the plugin, .default too); take whichever is callable.
type FormatsPlugin = (ajv: Ajv2020) => unknown;
const formatsModule = addFormatsModule as unknown as FormatsPlugin | { default: FormatsPlugin };
const addFormats: FormatsPlugin = typeof formatsModule === 'function' ? formatsModule : formatsModule.default;

/**
 * Checks responses against openapi.yaml: the status must be documented for the operation (exactly, by
 * its `4XX` range, or `default`), the content type must be one documented for it, and a JSON body must
 * validate (Ajv, JSON Schema 2020-12, as OpenAPI 3.1 uses) against that response's schema.
 */
export class ResponseOracle {
  private readonly routes: Route[] = [];
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(openapiPath: string) {
    const doc = parse(readFileSync(openapiPath, 'utf8')) as OpenApiDocument;
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addSchema(doc as object, 'openapi');
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (operation === undefined) continue;
        const segments = template.split('/').filter((s) => s !== '');
        const pattern = segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : escapeRegex(s))).join('/');
        const security = operation.security ?? doc.security ?? [];
        this.routes.push({
          ref: {
            method: method.toUpperCase(),
            template,
            secured:
              security.length > 0 &&
              !security.every((s) => typeof s === 'object' && s !== null && Object.keys(s).length === 0),
          },
          regex: new RegExp(`^/${pattern}/?$`),
          literalSegments: segments.filter((s) => !s.startsWith('{')).length,
          operation,
        });
      }
    }
    // A literal segment beats a parameter: /queue/dead-letters before /queue/{x}.
    this.routes.sort((a, b) => b.literalSegments - a.literalSegments);
  }

  /** Every operation of the document. */
  operations(): OperationRef[] {
    return this.routes.map((r) => r.ref);
  }

  /** The operation a method and request path (without the query) belong to, if any. */
  match(method: string, path: string): OperationRef | undefined {
    return this.find(method, path)?.ref;
  }

  /** Checks one response; undefined when it is as documented. */
  check(
    method: string,
    path: string,
    status: number,
    contentType: string | undefined,
    body: Buffer,
  ): ContractProblem | undefined {
    const route = this.find(method, path);
    if (route === undefined)
      return { kind: 'unknown_operation', detail: `no operation in openapi.yaml for ${method} ${path}` };
    const where = `${route.ref.method} ${route.ref.template}`;
    if (status >= 500)
      return {
        kind: 'server_error_5xx',
        detail: `${where} answered ${status}: ${body.toString('utf8').slice(0, 300)}`,
      };
    const responses = route.operation.responses ?? {};
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => Object.hasOwn(responses, k));
    if (key === undefined)
      return {
        kind: 'status_undocumented',
        detail: `${where} answered ${status}, documented: ${Object.keys(responses).join(', ')}; body ${body.toString('utf8').slice(0, 300)}`,
      };
    const content = responses[key]?.content;
    if (content === undefined || Object.keys(content).length === 0) return undefined;
    const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    const documented = Object.keys(content).find((type) => type.toLowerCase() === mediaType);
    if (documented === undefined) {
      return {
        kind: 'content_type_mismatch',
        detail: `${where} ${status}: content-type ${contentType ?? '(none)'}, documented ${Object.keys(content).join(', ')}; body ${body.toString('utf8').slice(0, 200)}`,
      };
    }
    if (content[documented]?.schema === undefined) return undefined;
    let value: unknown;
    if (mediaType.endsWith('json')) {
      try {
        value = JSON.parse(body.toString('utf8'));
      } catch {
        return {
          kind: 'schema_mismatch',
          detail: `${where} ${status}: body is not JSON: ${body.toString('utf8').slice(0, 200)}`,
        };
      }
    } else {
      value = body.toString('utf8');
    }
    const pointer = `openapi#/paths/${pointerToken(route.ref.template)}/${route.ref.method.toLowerCase()}/responses/${pointerToken(key)}/content/${pointerToken(documented)}/schema`;
    const validate = this.validatorFor(pointer);
    if (validate(value)) return undefined;
    const errors = (validate.errors ?? [])
      .slice(0, 3)
      .map(
        (e) =>
          `${e.instancePath || '/'} ${e.message ?? ''}${e.params && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ''}`,
      );
    return {
      kind: 'schema_mismatch',
      detail: `${where} ${status}: ${errors.join('; ')}; body ${JSON.stringify(value).slice(0, 300)}`,
    };
  }

  /** Validates a value against a component schema (e.g. ErrorBody); the Ajv messages, or undefined when valid. */
  checkComponent(name: string, value: unknown): string | undefined {
    const pointer = `openapi#/components/schemas/${pointerToken(name)}`;
    const validate = this.validatorFor(pointer);
    if (validate(value)) return undefined;
    return (validate.errors ?? [])
      .slice(0, 3)
      .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`)
      .join('; ');
  }

  // Ajv's compiled validator of a schema in the document, compiled once.
  private validatorFor(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.getSchema(pointer);
      if (validate === undefined) throw new Error(`cannot compile ${pointer}`);
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  private find(method: string, path: string): Route | undefined {
    const upper = method.toUpperCase();
    return this.routes.find((r) => r.ref.method === upper && r.regex.test(path));
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function pointerToken(text: string): string {
  return text.replace(/~/g, '~0').replace(/\//g, '~1');
}
