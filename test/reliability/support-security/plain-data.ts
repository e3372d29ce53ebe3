/**
 * Checks for "untrusted JSON stayed plain data": no object with a foreign
 * prototype, no inherited enumerable property, and the built-in prototypes
 * exactly as they were. Walks iteratively (inputs may be deep).
 */

/** Every way `value` is not plain JSON data (empty when it is). */
export function plainDataViolations(value: unknown, limit = 10): string[] {
  const violations: string[] = [];
  const stack: Array<[unknown, string]> = [[value, "(root)"]];
  while (stack.length > 0 && violations.length < limit) {
    const [current, path] = stack.pop()!;
    if (typeof current !== "object" || current === null) continue;
    const prototype: unknown = Object.getPrototypeOf(current);
    if (Array.isArray(current)) {
      if (prototype !== Array.prototype) violations.push(`${path}: array with a foreign prototype`);
      for (const [index, item] of current.entries()) stack.push([item, `${path}[${index}]`]);
      continue;
    }
    if (prototype !== Object.prototype && prototype !== null) violations.push(`${path}: object with a foreign prototype`);
    const own = new Set(Object.keys(current));
    for (const key in current) if (!own.has(key)) violations.push(`${path}.${key}: inherited enumerable property`);
    for (const key of own) stack.push([(current as Record<string, unknown>)[key], `${path}.${key}`]);
  }
  return violations;
}

const BUILT_INS: ReadonlyArray<[string, object]> = [
  ["Object.prototype", Object.prototype],
  ["Array.prototype", Array.prototype],
  ["Function.prototype", Function.prototype],
  ["String.prototype", String.prototype],
];

/** A snapshot of the built-in prototypes: own keys and property values. */
export function snapshotPrototypes(): Map<string, Map<PropertyKey, unknown>> {
  const snapshot = new Map<string, Map<PropertyKey, unknown>>();
  for (const [name, prototype] of BUILT_INS) {
    const properties = new Map<PropertyKey, unknown>();
    for (const key of Reflect.ownKeys(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, key)!;
      properties.set(key, "value" in descriptor ? descriptor.value : descriptor.get);
    }
    snapshot.set(name, properties);
  }
  return snapshot;
}

/** What changed on the built-in prototypes since `before` (empty when nothing did). */
export function prototypeChanges(before: Map<string, Map<PropertyKey, unknown>>): string[] {
  const after = snapshotPrototypes();
  const changes: string[] = [];
  for (const [name, properties] of after) {
    const earlier = before.get(name)!;
    for (const [key, value] of properties) {
      if (!earlier.has(key)) changes.push(`${name}.${String(key)} added`);
      else if (earlier.get(key) !== value) changes.push(`${name}.${String(key)} changed`);
    }
    for (const key of earlier.keys()) if (!properties.has(key)) changes.push(`${name}.${String(key)} removed`);
  }
  return changes;
}
