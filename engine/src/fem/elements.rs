//! Elastic elements: tetrahedra plus optional thin (cloth/rod) elements in one pool. Rest data
//! is uploaded once; energies, gradients and Hessians are recorded into command graphs. Pool
//! index `e < T` is tet `e`, `e ≥ T` thin element `e − T`; corner gradients live at `4e + k`.
//! There is no buffer of element Hessians: a tet keeps its analytic eigensystem (8 vec4,
//! `kernels/fem/tet_eigensystem.comp`) and the block assembly (`kernels/fem/assemble_hessian.comp`)
//! computes every element's 3×3 contributions where it gathers them.
//! References: [`crate::cpu_reference::fem`], [`crate::cpu_reference::thin`].

use super::rest::TetRest;
use super::thin::{ThinElement, NO_VERTEX};
use crate::vk::{
    ids, BufferUsage, Context, Dispatch, GpuBuffer, Graph, TexelFormat, VkError, VkResult,
};

/// The element buffers: storage, and read by the element kernels through texel views.
const FEM_USAGE: BufferUsage = BufferUsage::STORAGE.union(BufferUsage::TEXEL);
const V4: TexelFormat = TexelFormat::Rgba32Float;
const U4: TexelFormat = TexelFormat::Rgba32Uint;
const U1: TexelFormat = TexelFormat::R32Uint;
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

/// GPU arrays of the thin elements (one unused placeholder element when there are none, so
/// the assembly kernel always has its bindings).
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
            .read_texels(positions, V4)
            .read_texels(&self.verts, U4)
            .read_texels(&self.kinds, U1)
            .read_texels(&self.data, V4)
    }
}

/// The tets (and thin elements) of one or more bodies with their rest shapes and parameters.
pub struct TetElements {
    num_vertices: usize,
    num_tets: usize,
    thin: ThinGpu,
    model: ElementModel,
    tets: GpuBuffer<[u32; 4]>,
    rest: GpuBuffer<[f32; 4]>,
    lame: GpuBuffer<[f32; 2]>,
    corner_grad: GpuBuffer<[f32; 4]>,
    energy: GpuBuffer<f32>,
    start: GpuBuffer<u32>,
    corners: GpuBuffer<u32>,
    vertex_grad: GpuBuffer<[f32; 4]>,
    eigen: GpuBuffer<[f32; 4]>,
}

/// Vec4s of analytic eigensystem per tet (`kernels/fem/tet_eigensystem.comp`).
pub const EIGEN_VEC4S_PER_TET: usize = 8;

/// Where [`TetElements::record_assembly`] writes the Newton matrix and what it adds to the
/// element Hessians: the block storage of the linear solver and the stepper's per-vertex terms.
pub struct BlockAssembly<'a> {
    /// 1/h² (1/s²).
    pub inv_h2: f32,
    /// Vertex masses (kg).
    pub mass: &'a GpuBuffer<f32>,
    /// Inverse masses (0 for fixed vertices).
    pub inv_mass: &'a GpuBuffer<f32>,
    /// Per-vertex 3×3 contact/friction blocks added to the diagonal (3 row vec4s per vertex).
    pub contact_hess: &'a GpuBuffer<[f32; 4]>,
    /// The off-diagonal structure ([`EdgeSparsity`]).
    pub sparsity: &'a EdgeSparsity,
    /// Diagonal blocks out (3 row vec4s per vertex).
    pub diag: &'a GpuBuffer<[f32; 4]>,
    /// Their inverses out.
    pub inverse_diag: &'a GpuBuffer<[f32; 4]>,
    /// Off-diagonal blocks out (3 row vec4s per edge of [`EdgeSparsity::pairs`]).
    pub off: &'a GpuBuffer<[f32; 4]>,
    /// Per-vertex stiffness estimate of the warm start out.
    pub stiffness: &'a GpuBuffer<f32>,
}

/// The off-diagonal block structure of an element pool: its unique element edges (i < j) and,
/// per edge, the element entries `16 e + 4 a + b` (corners a, b of pool element e) that add
/// into it, in pool order (a fixed summation order).
pub struct EdgeSparsity {
    /// Unique edges (i < j), in order of first appearance in the pool.
    pub pairs: Vec<(u32, u32)>,
    start: GpuBuffer<u32>,
    entries: GpuBuffer<u32>,
    pair_buf: GpuBuffer<[u32; 2]>,
}

impl EdgeSparsity {
    /// The structure of the pool `elements` (tets, then thin elements; [`NO_VERTEX`] marks an
    /// unused corner).
    pub fn new(ctx: &Context, elements: impl Iterator<Item = [u32; 4]>) -> VkResult<Self> {
        let (pairs, start, entries) = edge_structure(elements);
        let storage = FEM_USAGE;
        Ok(EdgeSparsity {
            start: ctx.upload_buffer("fem.edge_start", &start, storage)?,
            entries: ctx.upload_buffer("fem.edge_entries", &entries, storage)?,
            pair_buf: ctx.upload_buffer(
                "fem.edge_pairs",
                &pairs.iter().map(|&(i, j)| [i, j]).collect::<Vec<_>>(),
                storage,
            )?,
            pairs,
        })
    }
}

/// Unique edges of `elements` with their CSR of element entries (`16 e + 4 a + b`).
pub fn edge_structure(
    elements: impl Iterator<Item = [u32; 4]>,
) -> (Vec<(u32, u32)>, Vec<u32>, Vec<u32>) {
    let mut edge_index = std::collections::HashMap::new();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut items: Vec<(usize, u32)> = Vec::new();
    for (t, tet) in elements.enumerate() {
        for a in 0..4 {
            for b in 0..4 {
                let (i, j) = (tet[a], tet[b]);
                if i < j && j != NO_VERTEX {
                    let e = *edge_index.entry((i, j)).or_insert_with(|| {
                        pairs.push((i, j));
                        pairs.len() - 1
                    });
                    items.push((e, (16 * t + 4 * a + b) as u32));
                }
            }
        }
    }
    let (start, entries) = csr(pairs.len(), &items);
    (pairs, start, entries)
}

/// Push constants of `fem/assemble_hessian.comp`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct AssemblyPush {
    count: u32,
    inv_h2: f32,
    num_tets: u32,
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
        let (mut verts, mut kinds, mut data) = super::thin::pack(thin);
        if thin.is_empty() {
            verts.push([NO_VERTEX; 4]);
            kinds.push(0);
            data.extend([[0.0; 4]; 2]);
        }
        let thin_gpu = ThinGpu {
            count: thin.len(),
            verts: ctx.upload_buffer("fem.thin_verts", &verts, FEM_USAGE)?,
            kinds: ctx.upload_buffer("fem.thin_kinds", &kinds, FEM_USAGE)?,
            data: ctx.upload_buffer("fem.thin_data", &data, FEM_USAGE)?,
        };
        let (start, corners) = csr(nv, &corner_items);
        let lame32: Vec<[f32; 2]> = lame.iter().map(|&(m, l)| [m as f32, l as f32]).collect();
        Ok(TetElements {
            num_vertices: nv,
            num_tets: tets.len(),
            thin: thin_gpu,
            model,
            tets: ctx.upload_buffer("fem.tets", tets, FEM_USAGE)?,
            rest: ctx.upload_buffer("fem.rest", &rest, FEM_USAGE)?,
            lame: ctx.upload_buffer("fem.lame", &lame32, FEM_USAGE)?,
            corner_grad: ctx.create_buffer("fem.corner_grad", 4 * pool, FEM_USAGE)?,
            energy: ctx.create_buffer("fem.energy", pool, FEM_USAGE)?,
            start: ctx.upload_buffer("fem.vertex_start", &start, FEM_USAGE)?,
            corners: ctx.upload_buffer("fem.vertex_corners", &corners, FEM_USAGE)?,
            vertex_grad: ctx.create_buffer("fem.vertex_grad", nv, FEM_USAGE)?,
            eigen: ctx.create_buffer(
                "fem.eigensystems",
                EIGEN_VEC4S_PER_TET * tets.len(),
                FEM_USAGE,
            )?,
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
            .read_texels(positions, V4)
            .read_texels(&self.tets, U4)
            .read_texels(&self.rest, V4)
            .read_texels(&self.lame, TexelFormat::Rg32Float)
            .write(&self.corner_grad)
            .write(&self.energy)
            .push(&(self.num_tets as u32)),
        );
        let t = &self.thin;
        if t.count > 0 {
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
            .read_texels(&self.corner_grad, V4)
            .read_texels(&self.start, U1)
            .read_texels(&self.corners, U1)
            .write(&self.vertex_grad)
            .push(&(self.num_vertices as u32)),
        );
    }

    /// Records the tets' analytic eigensystems at `positions` (what the assembly needs of them;
    /// thin elements need nothing beforehand), projected to PSD.
    pub fn record_hessian(&self, g: &mut Graph, positions: &GpuBuffer<[f32; 4]>) {
        self.record_hessian_projected(g, positions, true);
    }

    /// [`TetElements::record_hessian`] with the tets' eigenvalues clamped at 0 (`project`) or
    /// exact (an indefinite Hessian; thin elements stay projected).
    pub fn record_hessian_projected(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        project: bool,
    ) {
        if self.num_tets == 0 {
            return;
        }
        g.dispatch(
            Dispatch::new(
                "fem.tet_eigensystem",
                ids::FEM_TET_EIGENSYSTEM,
                [(self.num_tets as u32).div_ceil(WG), 1, 1],
            )
            .workgroup_size(WG)
            .spec(&[self.model_code(), u32::from(project)])
            .read_texels(positions, V4)
            .read_texels(&self.tets, U4)
            .read_texels(&self.rest, V4)
            .read_texels(&self.lame, TexelFormat::Rg32Float)
            .write(&self.eigen)
            .push(&(self.num_tets as u32)),
        );
    }

    /// Records the assembly of the Newton matrix at `positions` into `out` (after
    /// [`TetElements::record_hessian`] in the same graph): one invocation per diagonal block
    /// (vertex) and one per off-diagonal block (edge), each gathering its elements' projected
    /// 3×3 contributions in a fixed order.
    pub fn record_assembly(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        out: &BlockAssembly<'_>,
    ) {
        self.record_assembly_projected(g, positions, out, true);
    }

    /// [`TetElements::record_assembly`] after a [`TetElements::record_hessian_projected`] with
    /// the same `project`: exact (possibly indefinite) diagonal blocks get the inverse of their
    /// absolute value, |D|⁻¹, as the preconditioner's block instead of a floored Cholesky.
    pub fn record_assembly_projected(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        out: &BlockAssembly<'_>,
        project: bool,
    ) {
        let sp = out.sparsity;
        let t = &self.thin;
        for (mode, name, start, entries, count, blocks) in [
            (
                0u32,
                "fem.assemble_diag",
                &self.start,
                &self.corners,
                self.num_vertices,
                out.diag,
            ),
            (
                1u32,
                "fem.assemble_off",
                &sp.start,
                &sp.entries,
                sp.pairs.len(),
                out.off,
            ),
        ] {
            if count == 0 {
                continue;
            }
            g.dispatch(
                Dispatch::new(
                    name,
                    ids::FEM_ASSEMBLE_HESSIAN,
                    [(count as u32).div_ceil(WG), 1, 1],
                )
                .workgroup_size(WG)
                .spec(&[mode, u32::from(project)])
                .read_texels(&self.eigen, V4)
                .read_texels(positions, V4)
                .read_texels(&t.verts, U4)
                .read_texels(&t.kinds, U1)
                .read_texels(&t.data, V4)
                .read_texels(start, U1)
                .read_texels(entries, U1)
                .read_texels(out.mass, TexelFormat::R32Float)
                .read_texels(out.inv_mass, TexelFormat::R32Float)
                .read_texels(&sp.pair_buf, TexelFormat::Rg32Uint)
                .write(blocks)
                // Written in mode 0 only, but the kernel's SPIR-V declares both bindings
                // writable in every mode: declared written so that the synchronization
                // validation sees the barrier before a later reader in the same graph.
                .write(out.inverse_diag)
                .read_texels(out.contact_hess, V4)
                .write(out.stiffness)
                .push(&AssemblyPush {
                    count: count as u32,
                    inv_h2: out.inv_h2,
                    num_tets: self.num_tets as u32,
                }),
            );
        }
    }

    /// Elements in the pool (tets, then thin elements).
    pub fn num_elements(&self) -> usize {
        self.num_tets + self.thin.count
    }

    /// The tets' analytic eigensystems ([`EIGEN_VEC4S_PER_TET`] vec4s per tet, layout in
    /// `kernels/fem/tet_eigensystem.comp`), valid after a recorded Hessian ran.
    pub fn eigensystems(&self) -> &GpuBuffer<[f32; 4]> {
        &self.eigen
    }

    fn model_code(&self) -> u32 {
        match self.model {
            ElementModel::StableNeoHookean => 0,
            ElementModel::StVenantKirchhoff => 1,
            ElementModel::CorotatedLinear => 2,
        }
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

/// The largest buffers an element pool of `tets` and thin elements (their corners, unused ones
/// [`NO_VERTEX`]) makes Supple allocate, by buffer name, in bytes: what grows with the element
/// count (per-corner gradients and CSRs, the eigensystems, the edge structure and the linear
/// solver's off-diagonal blocks). For refusing a scene before anything is allocated
/// ([`check_buffer_sizes`]).
pub fn pool_buffer_bytes(tets: &[[u32; 4]], thin: &[[u32; 4]]) -> Vec<(&'static str, u64)> {
    let pool = (tets.len() + thin.len()) as u64;
    let corners: u64 = 4 * tets.len() as u64
        + thin
            .iter()
            .map(|e| e.iter().filter(|&&v| v != NO_VERTEX).count() as u64)
            .sum::<u64>();
    let mut keys: Vec<u64> = Vec::new();
    for e in tets.iter().chain(thin) {
        for a in 0..4 {
            for b in 0..4 {
                let (i, j) = (e[a], e[b]);
                if i < j && j != NO_VERTEX {
                    keys.push(((i as u64) << 32) | j as u64);
                }
            }
        }
    }
    let entries = keys.len() as u64;
    keys.sort_unstable();
    keys.dedup();
    let pairs = keys.len() as u64;
    vec![
        ("fem.corner_grad", 64 * pool),
        ("fem.energy", 4 * pool),
        ("fem.vertex_corners", 4 * corners),
        ("fem.tets", 16 * tets.len() as u64),
        ("fem.rest", 48 * tets.len() as u64),
        (
            "fem.eigensystems",
            16 * EIGEN_VEC4S_PER_TET as u64 * tets.len() as u64,
        ),
        ("fem.thin_data", 32 * thin.len() as u64),
        ("fem.edge_entries", 4 * entries),
        ("fem.edge_pairs", 8 * pairs),
        ("pcg.off", 48 * pairs),
    ]
}

/// Refuses, before anything is allocated, a buffer of `plan` (name, bytes) larger than the
/// device's largest storage binding (`maxStorageBufferRange`), naming the buffer, its size and
/// the limit (the same error `Context::create_buffer` gives, only earlier).
pub fn check_buffer_sizes(ctx: &Context, plan: &[(&str, u64)]) -> VkResult<()> {
    let max = ctx.caps().max_storage_buffer_range;
    match plan.iter().find(|(_, b)| b.div_ceil(16) * 16 > max) {
        Some((name, bytes)) => Err(VkError::BufferTooLarge {
            name: (*name).to_string(),
            bytes: bytes.div_ceil(16) * 16,
            max,
        }),
        None => Ok(()),
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
