/* Talking to the REST API from the inbox: the session cookie, the CSRF token on writes,
 * and the server's stable error code and detail read out of a JSON error body. */
import { isObj } from './values.js';

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match) return decodeURIComponent(match[1]);
  const input = document.querySelector('input[name="csrfmiddlewaretoken"]');
  return input ? input.value : '';
}

/** Send a request: {res (null on a network failure), data, detail, code}. `body` is sent as JSON when given. */
export async function sendJson(url, { method = 'GET', body } = {}) {
  let res = null;
  let data = null;
  const headers = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-CSRFToken'] = csrfToken();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    res = await fetch(url, { method, credentials: 'same-origin', headers, body: body === undefined ? undefined : JSON.stringify(body) });
    data = res.status === 204 ? null : await res.json().catch(() => null);
  } catch (_) {
    res = null;
  }
  const detail = isObj(data) && typeof data.detail === 'string' ? data.detail : '';
  const code = isObj(data) && typeof data.error === 'string' ? data.error : '';
  return { res, data, detail, code };
}
