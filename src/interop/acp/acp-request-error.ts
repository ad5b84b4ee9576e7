import { RequestError } from '@agentclientprotocol/sdk';
import { CodeError, ERROR_CATALOGUE } from '../../errors.js';

/**
 * Our error as a JSON-RPC error: a CodeError keeps its code, message and details in `data.error` (our one
 * error shape); 4xx codes are invalid params (-32602), a missing session is -32002, anything else internal.
 */
export function acpRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  if (!(error instanceof CodeError))
    return new RequestError(-32603, 'Internal error', {
      error: { code: 'INTERNAL_ERROR', message: 'an unexpected server fault', details: {} },
    });
  const data = { error: { code: error.code, message: error.message, details: error.details } };
  const status = ERROR_CATALOGUE[error.code]?.status ?? 500;
  if (error.code === 'SESSION_NOT_FOUND') return new RequestError(-32002, error.message, data);
  if (status === 401) return new RequestError(-32000, error.message, data);
  return new RequestError(status < 500 ? -32602 : -32603, error.message, data);
}
