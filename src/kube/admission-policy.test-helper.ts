/** Checks of CEL expressions assembled by hand (kube/admission-policy.ts and its users). */

/** Parentheses and brackets balance outside string literals: a cheap check that an expression was assembled whole. */
export function balanced(expr: string): boolean {
  const stack: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[' };
  let quote: string | undefined;
  for (let i = 0; i < expr.length; i++) {
    const c = expr.charAt(i);
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[') stack.push(c);
    else if (c === ')' || c === ']') {
      if (stack.pop() !== pairs[c]) return false;
    }
  }
  return stack.length === 0 && quote === undefined;
}
