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
