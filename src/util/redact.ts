/**
 * Credentials never reach logs, events, conditions or status. A URL's userinfo
 * (`https://user:token@host/…`) is a credential; a query parameter is not (it stays). Every
 * place that puts a source URL or a message that may quote one (git's, fetch's) into an error,
 * condition, event or log line passes it through here first.
 */

export const REDACTED = '***';

/** Schemes whose user name may itself be the secret (`https://<token>@host`). */
const WHOLE_USERINFO = /^(?:https?|ftps?|wss?|oci|git\+https?)$/i;

/** `url` with its userinfo masked: `https://***@host/x`, `ssh://git:***@host/x`. Other text is kept. */
export function redactUrl(url: string): string {
  return redactText(url);
}

/**
 * `text` with the userinfo of every URL in it masked, and Basic/Bearer credentials after an
 * `Authorization` header name. For http(s) the whole userinfo goes (a token is often the user
 * name); for other schemes only the password (`ssh://git@host` keeps its `git`).
 */
export function redactText(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*):\/\/([^\s/?#@'"<>]*)@/gi, (_m, scheme: string, userinfo: string) => {
      if (userinfo === '' || userinfo === REDACTED) return `${scheme}://${userinfo}@`;
      if (WHOLE_USERINFO.test(scheme)) return `${scheme}://${REDACTED}@`;
      const colon = userinfo.indexOf(':');
      return colon < 0 ? `${scheme}://${userinfo}@` : `${scheme}://${userinfo.slice(0, colon)}:${REDACTED}@`;
    })
    .replace(/\b(authorization["']?\s*[:=]\s*["']?)(basic|bearer)\s+[A-Za-z0-9._~+/=-]+/gi, `$1$2 ${REDACTED}`);
}

/** Whether `url` carries credentials in its userinfo. */
export function hasUserinfo(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
}

/**
 * Splits `https://user:pass@host/x` into the URL without userinfo and the (percent-decoded)
 * credentials, as curl and git would send them: Basic auth.
 */
export function splitUserinfo(url: string): { url: string; credentials?: { username: string; password: string } } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { url };
  }
  if (u.username === '' && u.password === '') return { url };
  const decode = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const credentials = { username: decode(u.username), password: decode(u.password) };
  u.username = '';
  u.password = '';
  return { url: u.toString(), credentials };
}
