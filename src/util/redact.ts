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

/** `user[:password]@` at the start of a reference without a scheme, before its host: `u:p@quay.io/x`. */
export const BARE_USERINFO = /^([^/@\s]+)@(?=[^/@\s]*\/)/;
/** The same with a password: `git@host:org/repo` (scp-like ssh) names only a user. */
const BARE_USER_PASSWORD = /^[^/@:\s]*:[^/@\s]*@/;

/**
 * Whether `ref` (a URL, or an image reference written without a scheme) carries a credential:
 * any userinfo over http(s), oci and the like (a token is often the user name); a password over
 * other schemes (`ssh://git@host/x` names a user, not a secret); `user:password@` before the
 * host of a reference without a scheme (`git@host:org/repo` is scp-like ssh: a user only).
 */
export function carriesCredential(ref: string): boolean {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(ref)?.[1];
  if (scheme === undefined) return BARE_USER_PASSWORD.test(ref);
  let u: URL;
  try {
    u = new URL(ref);
  } catch {
    // Not parseable as a URL; look for userinfo the way redactText does.
    return /^[a-z][a-z0-9+.-]*:\/\/[^\s/?#@]+@/i.test(ref);
  }
  if (u.password !== '') return true;
  return u.username !== '' && WHOLE_USERINFO.test(scheme);
}

/** `ref` fit to show: URL userinfo masked as redactText does, and bare `user:pass@` masked too. */
export function redactReference(ref: string): string {
  return redactText(ref).replace(BARE_USERINFO, `${REDACTED}@`);
}

/**
 * The message for a reference refused because it carries a credential: the reference with the
 * credential masked, and where the credential goes instead (`instead`, e.g. "a
 * kubernetes.io/basic-auth Secret named in spec.source.http.secret").
 */
export function credentialInReferenceMessage(ref: string, instead: string): string {
  return `must not carry credentials (${redactReference(ref)}): put them in ${instead}`;
}
