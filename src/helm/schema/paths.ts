/**
 * Values paths in messages, as a chart's users write them: `image.tag`, `tolerations[]` for
 * every element of a list, `podLabels.*` for every key of a map, and `annotations["a.b/c"]`
 * for keys that are not plain identifiers.
 */

export function childPath(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$-]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

export function itemsPath(path: string): string {
  return `${path}[]`;
}

export function indexPath(path: string, i: number): string {
  return `${path}[${i}]`;
}

export function additionalPath(path: string): string {
  return path === '' ? '*' : `${path}.*`;
}

/** How a path reads in a message: the root is `(root)`. */
export function showPath(path: string): string {
  return path === '' ? '(root)' : path;
}
