// Branded scalar units. A brand costs nothing at run time; it stops a metre from being passed
// where a radian is expected at compile time. Arrays of mixed units stay plain typed arrays,
// with the unit and layout stated in the field name (e.g. `rootPosM`, `jointPosRad`).
declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

export type Meters = Brand<number, 'm'>;
export type Radians = Brand<number, 'rad'>;
export type Seconds = Brand<number, 's'>;
export type Hertz = Brand<number, 'Hz'>;

export const meters = (v: number): Meters => v as Meters;
export const radians = (v: number): Radians => v as Radians;
export const seconds = (v: number): Seconds => v as Seconds;
export const hertz = (v: number): Hertz => v as Hertz;

/** Position in metres, [x, y, z]. */
export type Vec3M = readonly [number, number, number];
/** Unit quaternion, scalar first: [w, x, y, z]. The only order used inside the program. */
export type QuatWxyz = readonly [number, number, number, number];
/** Unit quaternion, scalar last, as some file formats store it. Converted at the boundary. */
export type QuatXyzw = readonly [number, number, number, number];

export const xyzwToWxyz = (q: QuatXyzw): QuatWxyz => [q[3], q[0], q[1], q[2]];
export const wxyzToXyzw = (q: QuatWxyz): QuatXyzw => [q[1], q[2], q[3], q[0]];
