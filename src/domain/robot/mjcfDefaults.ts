import { InputError } from '../problems';
import type { XmlElement } from '../xml/parseXml';
import { where } from './mjcfAttributes';

// The default classes of an MJCF model (<default>, nested, with `class` and `childclass`) and the
// attributes an element ends up with: those of its class chain from `main` down, then its own.

interface DefaultClass {
  parent: string | null;
  /** element type (joint, geom, position, …) → attributes set by this class alone */
  own: Map<string, Record<string, string>>;
}

/** The actuator elements; MuJoCo keeps one actuator default per class, which all of them share. */
export const ACTUATOR_KINDS = [
  'position',
  'motor',
  'velocity',
  'general',
  'intvelocity',
  'damper',
  'cylinder',
  'muscle',
  'adhesion',
];

/** An element's attributes after its defaults: `cls` is the class in force where it stands. */
export type ResolveAttrs = (el: XmlElement, type: string, cls: string) => Record<string, string>;

/** Reads the model's default classes and returns how to resolve an element's attributes through them. */
export function readDefaults(root: XmlElement): ResolveAttrs {
  const classes = new Map<string, DefaultClass>();
  const readDefault = (el: XmlElement, parent: string | null): void => {
    const name = el.attrs.class ?? (parent === null ? 'main' : undefined);
    if (name === undefined) throw new InputError(where(el), 'a nested <default> needs a class attribute');
    if (classes.has(name)) throw new InputError(where(el, 'class'), `default class "${name}" is defined twice`);
    const own = new Map<string, Record<string, string>>();
    classes.set(name, { parent, own });
    for (const child of el.children) {
      if (child.name === 'default') readDefault(child, name);
      else own.set(child.name, { ...(own.get(child.name) ?? {}), ...child.attrs });
    }
  };
  const topDefaults = root.children.filter((e) => e.name === 'default');
  if (topDefaults.length === 0) classes.set('main', { parent: null, own: new Map() });
  for (const d of topDefaults) {
    if (classes.has('main')) {
      // Several top-level <default> blocks: later ones add classes below main.
      for (const child of d.children) {
        if (child.name === 'default') readDefault(child, 'main');
        else
          classes
            .get('main')!
            .own.set(child.name, { ...(classes.get('main')!.own.get(child.name) ?? {}), ...child.attrs });
      }
    } else readDefault(d, null);
  }
  const actuatorKinds = ACTUATOR_KINDS;
  const resolved: ResolveAttrs = (el: XmlElement, type: string, cls: string) => {
    const className = el.attrs.class ?? cls;
    const chain: DefaultClass[] = [];
    let c: string | null = className;
    while (c !== null) {
      const dc = classes.get(c);
      if (!dc) throw new InputError(where(el, 'class'), `default class "${c}" is not defined`);
      chain.unshift(dc);
      c = dc.parent;
    }
    const out: Record<string, string> = {};
    for (const dc of chain) {
      // MuJoCo keeps one actuator default per class; every shortcut writes into it.
      if (actuatorKinds.includes(type)) {
        for (const k of actuatorKinds) Object.assign(out, dc.own.get(k) ?? {});
      } else Object.assign(out, dc.own.get(type) ?? {});
    }
    const own = { ...el.attrs };
    delete own.class;
    return Object.assign(out, own);
  };
  return resolved;
}
