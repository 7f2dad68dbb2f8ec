//! Summary of a loaded mesh file, as printed by `supple mesh info`.

use crate::import::Loaded;
use serde::Serialize;

/// What `supple mesh info` reports; serialises to the documented JSON object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeshInfo {
    /// Detected format name, e.g. `gmsh-msh-4.1-binary`.
    pub format: String,
    /// Number of vertices in the file.
    pub vertices: usize,
    /// Number of tetrahedra (0 for surface files).
    pub tets: usize,
    /// Boundary triangles of the tet mesh (faces used by exactly one tet), or the triangles of a
    /// surface file.
    pub surface_triangles: usize,
    /// Sum over tets of |signed volume| in cubic metres (0 for surface files).
    pub volume: f64,
    /// Axis-aligned bounding box `[[xmin, ymin, zmin], [xmax, ymax, zmax]]` over the vertices
    /// used by elements (all vertices when no element uses any).
    pub bbox: [[f64; 3]; 2],
    /// Tets found with negative volume in the input (they were flipped on import).
    pub inverted_tets: usize,
    /// Warnings found while loading and validating.
    pub warnings: Vec<String>,
}

impl MeshInfo {
    /// Computes the summary of a loaded file.
    pub fn from_loaded(l: &Loaded) -> MeshInfo {
        let (positions, used): (&[[f64; 3]], Vec<u32>) = if !l.tets.tets.is_empty() {
            (
                &l.tets.positions,
                l.tets.tets.iter().flatten().copied().collect(),
            )
        } else {
            (
                &l.surface.positions,
                l.surface.triangles.iter().flatten().copied().collect(),
            )
        };
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let mut grow = |p: &[f64; 3]| {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        };
        if used.is_empty() {
            positions.iter().for_each(&mut grow);
        } else {
            let mut seen = vec![false; positions.len()];
            for &v in &used {
                if let Some(s) = seen.get_mut(v as usize) {
                    if !*s {
                        *s = true;
                        grow(&positions[v as usize]);
                    }
                }
            }
        }
        if positions.is_empty() {
            lo = [0.0; 3];
            hi = [0.0; 3];
        }
        let (vertices, tets, surface_triangles, volume) = if l.tets.tets.is_empty() {
            (
                l.surface.positions.len().max(l.tets.positions.len()),
                0,
                l.surface.triangles.len(),
                0.0,
            )
        } else {
            (
                l.tets.positions.len(),
                l.tets.tets.len(),
                l.tets.boundary_triangles().len(),
                l.tets.total_volume_abs(),
            )
        };
        MeshInfo {
            format: l.format.clone(),
            vertices,
            tets,
            surface_triangles,
            volume,
            bbox: [lo, hi],
            inverted_tets: l.flipped_tets,
            warnings: l.warnings.clone(),
        }
    }
}
