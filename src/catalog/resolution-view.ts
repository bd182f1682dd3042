/**
 * A catalog as a manager keeps it in memory for resolution: every record, but a bundle that has an
 * image loses its `olm.bundle.object` properties. Those are the bundle's whole manifests (CSV,
 * CRDs), base64 in JSON, most of an older catalog's bytes; nothing resolves on them (the resolver
 * reads packages, GVKs, constraints, `olm.csv.metadata`), and the installer pulls the bundle image.
 * A bundle without an image keeps them: they are its content. The catalog's served bytes are the
 * stored file's, untouched (catalog-store).
 */
import { PROP_BUNDLE_OBJECT, type Bundle, type DeclarativeConfig } from '../declcfg/index.js';

function withoutObjects(b: Bundle): Bundle {
  if (b.image === '' || !b.properties.some((p) => p.type === PROP_BUNDLE_OBJECT)) return b;
  return { ...b, properties: b.properties.filter((p) => p.type !== PROP_BUNDLE_OBJECT) };
}

export function resolutionView(dc: DeclarativeConfig): DeclarativeConfig {
  return { ...dc, bundles: dc.bundles.map(withoutObjects) };
}
