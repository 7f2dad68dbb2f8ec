//! Elastic elements: tetrahedra plus optional thin (cloth/rod) elements in one pool. Rest data
//! is uploaded once; energies, gradients and Hessians are recorded into command graphs. Pool
//! index `e < T` is tet `e`, `e ≥ T` thin element `e − T`; corner gradients live at `4e + k`,
//! Hessians at `144e`. References: [`crate::cpu_reference::fem`], [`crate::cpu_reference::thin`].

use super::rest::TetRest;
use super::thin::{ThinElement, NO_VERTEX};
use crate::vk::{ids, BufferUsage, Context, Dispatch, GpuBuffer, Graph, VkError, VkResult};
use nalgebra::Vector3;

/// Constitutive models available in the GPU element kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementModel {
    /// Stable Neo-Hookean.
    StableNeoHookean,
    /// St. Venant–Kirchhoff.
    StVenantKirchhoff,
    /// Fixed corotated (Ψ = μ‖F − R‖² + λ/2 tr(RᵀF − I)², R the polar rotation of F; the
    /// Hessian includes ∂R/∂F).
    CorotatedLinear,
}

impl ElementModel {
    /// The element model of the scene's solids: the first solid body's (one per simulation on
    /// the steppers that share one element kernel); stable Neo-Hookean without solids.
    pub fn of_scene(scene: &crate::scene::Scene) -> ElementModel {
        use crate::scene::MaterialModel;
        scene
            .bodies
            .iter()
            .find_map(|b| match b.material.model {
                MaterialModel::StableNeoHookean => Some(ElementModel::StableNeoHookean),
                MaterialModel::Stvk => Some(ElementModel::StVenantKirchhoff),
                MaterialModel::Corotated => Some(ElementModel::CorotatedLinear),
                MaterialModel::Cloth | MaterialModel::Rod => None,
            })
            .unwrap_or(ElementModel::StableNeoHookean)
    }
}

/// GPU arrays of the thin elements.
struct ThinGpu {
    count: usize,
    verts: GpuBuffer<[u32; 4]>,
    kinds: GpuBuffer<u32>,
    data: GpuBuffer<[f32; 4]>,
}

impl ThinGpu {
    /// A thin-element kernel dispatch with its shared inputs bound (outputs follow).
    fn dispatch(
        &self,
        name: &str,
        id: crate::vk::KernelId,
        positions: &GpuBuffer<[f32; 4]>,
    ) -> Dispatch {
        Dispatch::new(name, id, [(self.count as u32).div_ceil(WG), 1, 1])
            .workgroup_size(WG)
            .read(positions)
            .read(&self.verts)
            .read(&self.kinds)
            .read(&self.data)
    }
}

/// The tets (and thin elements) of one or more bodies with their rest shapes and parameters.
pub struct TetElements {
    num_vertices: usize,
    num_tets: usize,
    thin: Option<ThinGpu>,
    model: ElementModel,
    tets: GpuBuffer<[u32; 4]>,
    rest: GpuBuffer<[f32; 4]>,
    lame: GpuBuffer<[f32; 2]>,
    corner_grad: GpuBuffer<[f32; 4]>,
    energy: GpuBuffer<f32>,
    start: GpuBuffer<u32>,
    corners: GpuBuffer<u32>,
    vertex_grad: GpuBuffer<[f32; 4]>,
    hessians: GpuBuffer<f32>,
}

const WG: u32 = 64;

impl TetElements {
    /// Uploads the rest data of `tets` over `rest_positions` (m) with per-tet `(μ, λ)` (Pa).
    pub fn new(
        ctx: &Context,
        rest_positions: &[[f64; 3]],
        tets: &[[u32; 4]],
        lame: &[(f64, f64)],
        model: ElementModel,
    ) -> VkResult<TetElements> {
        Self::with_thin(ctx, rest_positions, tets, lame, model, &[])
    }

    /// Like [`TetElements::new`], with cloth/rod elements after the tets in the same pool.
    pub fn with_thin(
        ctx: &Context,
        rest_positions: &[[f64; 3]],
        tets: &[[u32; 4]],
        lame: &[(f64, f64)],
        model: ElementModel,
        thin: &[ThinElement],
    ) -> VkResult<TetElements> {
        let bad = |m: String| VkError::Graph {
            graph: "fem.elements".into(),
            message: m,
        };
        if lame.len() != tets.len() {
            return Err(bad(format!(
                "{} Lamé pairs for {} tets",
                lame.len(),
                tets.len()
            )));
        }
        let nv = rest_positions.len();
        let mut rest = Vec::with_capacity(3 * tets.len());
        for (t, tet) in tets.iter().enumerate() {
            if tet.iter().any(|&v| v as usize >= nv) {
                return Err(bad(format!("tet {t} references a vertex beyond {nv}")));
            }
            let x = tet.map(|v| Vector3::from(rest_positions[v as usize]));
            let r =
                TetRest::new(&x).ok_or_else(|| bad(format!("tet {t} is degenerate at rest")))?;
            for row in 0..3 {
                let w = if row == 0 { r.volume as f32 } else { 0.0 };
                rest.push([
                    r.dm_inv[(row, 0)] as f32,
                    r.dm_inv[(row, 1)] as f32,
                    r.dm_inv[(row, 2)] as f32,
                    w,
                ]);
            }
        }
        if let Some((e, _)) = thin.iter().enumerate().find(|(_, e)| {
            e.vertices()
                .iter()
                .any(|&v| v != NO_VERTEX && v as usize >= nv)
        }) {
            return Err(bad(format!(
                "thin element {e} references a vertex beyond {nv}"
            )));
        }
        // Vertex -> (element corner) CSR in pool order: a fixed summation order per vertex.
        let corner_items: Vec<(usize, u32)> = tets
            .iter()
            .copied()
            .chain(thin.iter().map(|e| e.vertices()))
            .enumerate()
            .flat_map(|(t, tet)| {
                (0..4)
                    .filter(move |&k| tet[k] != NO_VERTEX)
                    .map(move |k| (tet[k] as usize, (4 * t + k) as u32))
            })
            .collect();
        let pool = tets.len() + thin.len();
        let thin_gpu = if thin.is_empty() {
            None
        } else {
            let (verts, kinds, data) = super::thin::pack(thin);
            Some(ThinGpu {
                count: thin.len(),
                verts: ctx.upload_buffer("fem.thin_verts", &verts, BufferUsage::STORAGE)?,
                kinds: ctx.upload_buffer("fem.thin_kinds", &kinds, BufferUsage::STORAGE)?,
                data: ctx.upload_buffer("fem.thin_data", &data, BufferUsage::STORAGE)?,
            })
        };
        let (start, corners) = csr(nv, &corner_items);
        let lame32: Vec<[f32; 2]> = lame.iter().map(|&(m, l)| [m as f32, l as f32]).collect();
        Ok(TetElements {
            num_vertices: nv,
            num_tets: tets.len(),
            thin: thin_gpu,
            model,
            tets: ctx.upload_buffer("fem.tets", tets, BufferUsage::STORAGE)?,
            rest: ctx.upload_buffer("fem.rest", &rest, BufferUsage::STORAGE)?,
            lame: ctx.upload_buffer("fem.lame", &lame32, BufferUsage::STORAGE)?,
            corner_grad: ctx.create_buffer("fem.corner_grad", 4 * pool, BufferUsage::STORAGE)?,
            energy: ctx.create_buffer("fem.energy", pool, BufferUsage::STORAGE)?,
            start: ctx.upload_buffer("fem.vertex_start", &start, BufferUsage::STORAGE)?,
            corners: ctx.upload_buffer("fem.vertex_corners", &corners, BufferUsage::STORAGE)?,
            vertex_grad: ctx.create_buffer("fem.vertex_grad", nv, BufferUsage::STORAGE)?,
            hessians: ctx.create_buffer("fem.hessians", 144 * pool, BufferUsage::STORAGE)?,
        })
    }

    /// Records per-tet energies and gradients at `positions` and their per-vertex sums.
    pub fn record_gradient(&self, g: &mut Graph, positions: &GpuBuffer<[f32; 4]>) {
        let model = self.model_code();
        g.dispatch(
            Dispatch::new(
                "fem.tet_gradient",
                ids::FEM_TET_GRADIENT,
                [(self.num_tets as u32).div_ceil(WG).max(1), 1, 1],
            )
            .workgroup_size(WG)
            .spec(&[model])
            .read(positions)
            .read(&self.tets)
            .read(&self.rest)
            .read(&self.lame)
            .write(&self.corner_grad)
            .write(&self.energy)
            .push(&(self.num_tets as u32)),
        );
        if let Some(t) = &self.thin {
            let d = t.dispatch("fem.thin_gradient", ids::FEM_THIN_GRADIENT, positions);
            g.dispatch(
                d.write(&self.corner_grad)
                    .write(&self.energy)
                    .push(&[t.count as u32, self.num_tets as u32]),
            );
        }
        g.dispatch(
            Dispatch::new(
                "fem.gather_vertex",
                ids::FEM_GATHER_VERTEX,
                [(self.num_vertices as u32).div_ceil(WG).max(1), 1, 1],
            )
            .workgroup_size(WG)
            .read(&self.corner_grad)
            .read(&self.start)
            .read(&self.corners)
            .write(&self.vertex_grad)
            .push(&(self.num_vertices as u32)),
        );
    }

    /// Records the PSD-projected element Hessians at `positions` (12×12 per tet, row-major,
    /// vertex-major rows), with `sweeps` Jacobi sweeps for the 9×9 projection (6 is plenty).
    pub fn record_hessian(&self, g: &mut Graph, positions: &GpuBuffer<[f32; 4]>, sweeps: u32) {
        g.dispatch(
            Dispatch::new(
                "fem.tet_hessian",
                ids::FEM_TET_HESSIAN,
                [(self.num_tets as u32).div_ceil(WG).max(1), 1, 1],
            )
            .workgroup_size(WG)
            .spec(&[self.model_code()])
            .read(positions)
            .read(&self.tets)
            .read(&self.rest)
            .read(&self.lame)
            .write(&self.hessians)
            .push(&[self.num_tets as u32, sweeps]),
        );
        if let Some(t) = &self.thin {
            let d = t.dispatch("fem.thin_hessian", ids::FEM_THIN_HESSIAN, positions);
            g.dispatch(
                d.write(&self.hessians)
                    .push(&[t.count as u32, self.num_tets as u32]),
            );
        }
    }

    /// Elements in the pool (tets, then thin elements).
    pub fn num_elements(&self) -> usize {
        self.num_tets + self.thin.as_ref().map_or(0, |t| t.count)
    }

    /// Element Hessians (N/m), 144 floats per pool element, valid after a recorded Hessian ran.
    pub fn hessians(&self) -> &GpuBuffer<f32> {
        &self.hessians
    }

    fn model_code(&self) -> u32 {
        match self.model {
            ElementModel::StableNeoHookean => 0,
            ElementModel::StVenantKirchhoff => 1,
            ElementModel::CorotatedLinear => 2,
        }
    }

    /// Vertex -> tet-corner CSR (`start`, `4 t + k` entries in tet order), shared by every
    /// per-vertex gather over incident tets.
    pub(crate) fn vertex_corners(&self) -> (&GpuBuffer<u32>, &GpuBuffer<u32>) {
        (&self.start, &self.corners)
    }

    /// Per-vertex energy gradient (N), valid after a recorded gradient ran.
    pub fn vertex_gradient(&self) -> &GpuBuffer<[f32; 4]> {
        &self.vertex_grad
    }

    /// Per-element energies (J, tets then thin elements), valid after a recorded gradient ran.
    pub fn energies(&self) -> &GpuBuffer<f32> {
        &self.energy
    }
}

/// CSR of `(key, value)` pairs grouped by key (keys < `n`), values in input order:
/// `(start[n + 1], values)`.
pub(crate) fn csr(n: usize, items: &[(usize, u32)]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for (k, _) in items {
        start[k + 1] += 1;
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut out = vec![0u32; items.len()];
    for (k, v) in items {
        out[fill[*k] as usize] = *v;
        fill[*k] += 1;
    }
    (start, out)
}
