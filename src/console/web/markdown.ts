/**
 * CSV descriptions are Markdown written by whoever published the catalog: rendered by marked,
 * then sanitised by DOMPurify before it reaches the page, so no script, event handler or
 * `javascript:` link in it can run (the CSP would also refuse them; this is the first wall).
 */
import DOMPurify from 'dompurify';
import { marked } from 'marked';

export function drawMarkdown(into: HTMLElement, markdown: string): void {
  const html = marked.parse(markdown, { async: false, gfm: true });
  const clean = DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input', 'button'], FORBID_ATTR: ['style'] });
  into.innerHTML = clean;
  // Links leave the console in a new tab and tell the target nothing.
  for (const a of into.querySelectorAll('a')) {
    a.setAttribute('target', '_blank');
    a.setAttribute('rel', 'noopener noreferrer');
  }
}
