//! Reference time integrators (twin of `kernels/integrate/*.comp`).

use nalgebra::Vector3;

/// A ground plane `n·x ≥ offset` (unit `n`), or none when `n = 0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plane {
    /// Unit normal (zero: no plane).
    pub normal: Vector3<f64>,
    /// Offset along the normal (m).
    pub offset: f64,
}

/// One symplectic Euler step in place: `v += h (g − w ∇E)`, `x += h v`, fixed when `w = 0`,
/// projection onto the plane with the inward normal velocity removed.
pub fn symplectic_euler(
    x: &mut [Vector3<f64>],
    v: &mut [Vector3<f64>],
    inv_mass: &[f64],
    grad: &[Vector3<f64>],
    gravity: Vector3<f64>,
    plane: Plane,
    h: f64,
) {
    for i in 0..x.len() {
        let w = inv_mass[i];
        if w == 0.0 {
            continue;
        }
        let mut vi = v[i] + h * (gravity - w * grad[i]);
        let mut xi = x[i] + h * vi;
        let d = plane.normal.dot(&xi) - plane.offset;
        if plane.normal.norm_squared() > 0.0 && d < 0.0 {
            xi -= d * plane.normal;
            let vn = vi.dot(&plane.normal);
            if vn < 0.0 {
                vi -= vn * plane.normal;
            }
        }
        x[i] = xi;
        v[i] = vi;
    }
}
