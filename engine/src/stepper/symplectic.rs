//! Time integrators recorded into command graphs. [`SymplecticEuler`] is the RAINBOW baseline
//! (`kernels/integrate/symplectic_euler.comp`); reference: [`crate::cpu_reference::integrate`].

use crate::vk::{ids, Dispatch, GpuBuffer, Graph};

/// Parameters of one symplectic Euler step (SI units).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SymplecticEulerParams {
    /// Gravity (m/s²) in xyz; w unused.
    pub gravity: [f32; 4],
    /// Ground plane: unit normal in xyz (all zero: none), offset (m) in w.
    pub plane: [f32; 4],
    /// Number of vertices.
    pub n: u32,
    /// Time step (s).
    pub h: f32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 2],
}

/// Records symplectic Euler steps.
#[derive(Debug, Default, Clone, Copy)]
pub struct SymplecticEuler;

impl SymplecticEuler {
    /// Records one step updating `positions` and `velocities` in place from the elastic
    /// gradient `grad` (N) and inverse masses (1/kg; 0 = fixed).
    pub fn record(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        velocities: &GpuBuffer<[f32; 4]>,
        inv_mass: &GpuBuffer<f32>,
        grad: &GpuBuffer<[f32; 4]>,
        params: &SymplecticEulerParams,
    ) {
        g.dispatch(
            Dispatch::new(
                "integrate.symplectic_euler",
                ids::INTEGRATE_SYMPLECTIC_EULER,
                [params.n.div_ceil(64).max(1), 1, 1],
            )
            .workgroup_size(64)
            .read_write(positions)
            .read_write(velocities)
            .read(inv_mass)
            .read(grad)
            .push(params),
        );
    }
}

/// A ground plane `(normal, offset)` as the kernels' vec4 (unit normal in xyz, offset in w;
/// all zero for none).
pub fn plane_vec4(ground: Option<([f64; 3], f64)>) -> [f32; 4] {
    match ground {
        Some((n, o)) => {
            let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
                .sqrt()
                .max(f64::MIN_POSITIVE);
            [
                (n[0] / l) as f32,
                (n[1] / l) as f32,
                (n[2] / l) as f32,
                o as f32,
            ]
        }
        None => [0.0; 4],
    }
}

/// A 3-vector as the kernels' vec4 (w = 0).
pub fn vec4(v: [f64; 3]) -> [f32; 4] {
    [v[0] as f32, v[1] as f32, v[2] as f32, 0.0]
}

/// 3-vectors as the kernels' vec4 array (w = 0).
pub fn vec4s(v: &[[f64; 3]]) -> Vec<[f32; 4]> {
    v.iter().copied().map(vec4).collect()
}
