//! Summary of a loaded mesh file, as printed by `supple mesh info`.

use crate::import::Loaded;
use crate::model::TriMesh;
use crate::topology::EdgeCheck;
use serde::Serialize;

/// Where [`MeshInfo::volume`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VolumeSource {
    /// Sum over the tets of |signed volume|.
    Tets,
    /// The volume a closed, consistently oriented surface encloses (divergence theorem).
    EnclosedSurface,
    /// No volume: no tets, and the surface is open, non-manifold, inconsistently oriented or
    /// missing.
    None,
}

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
    /// Volume in cubic metres: the tets' (sum of |signed volume|), or for a surface file the
    /// volume it encloses when it is closed and consistently oriented; `None` (JSON `null`)
    /// otherwise.
    pub volume: Option<f64>,
    /// What `volume` is.
    pub volume_source: VolumeSource,
    /// Edges of the surface (the tet mesh's boundary, or the surface file's triangles) used by
    /// exactly one triangle; more than 0 means the surface is open.
    pub boundary_edges: usize,
    /// Edges of the surface used by more than two triangles.
    pub nonmanifold_edges: usize,
    /// Edges of the surface shared by two triangles whose orientations disagree.
    pub misoriented_edges: usize,
    /// Axis-aligned bounding box `[[xmin, ymin, zmin], [xmax, ymax, zmax]]` over the vertices
    /// used by elements (all vertices when no element uses any).
    pub bbox: [[f64; 3]; 2],
    /// Tets found with negative volume in the input (they were flipped on import).
    pub inverted_tets: usize,
    /// Warnings found while loading and validating, then the surface checks'.
    pub warnings: Vec<String>,
}

/// The bounding box of the vertices that `used` references (all vertices when it is empty).
fn bounding_box(positions: &[[f64; 3]], used: &[u32]) -> [[f64; 3]; 2] {
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
        for &v in used {
            if let Some(s) = seen.get_mut(v as usize) {
                if !*s {
                    *s = true;
                    grow(&positions[v as usize]);
                }
            }
        }
    }
    if positions.is_empty() {
        return [[0.0; 3]; 2];
    }
    [lo, hi]
}

/// Warnings about the surface's edges, and its enclosed volume when it has one.
fn surface_volume(
    surface: &TriMesh,
    check: &EdgeCheck,
    is_tet_boundary: bool,
    warnings: &mut Vec<String>,
) -> Option<f64> {
    if surface.triangles.is_empty() {
        return None;
    }
    let what = if is_tet_boundary {
        "the tets' boundary"
    } else {
        "the surface"
    };
    if check.boundary > 0 {
        warnings.push(format!(
            "open surface: {} boundary edges (used by one triangle); {what} encloses no volume",
            check.boundary
        ));
    }
    if check.nonmanifold > 0 && is_tet_boundary {
        // Surface files get this warning on import already.
        warnings.push(format!(
            "non-manifold boundary: {} edges shared by more than two boundary triangles",
            check.nonmanifold
        ));
    }
    if check.misoriented > 0 {
        warnings.push(format!(
            "inconsistent orientation: {} edges where two triangles run the same way (their normals disagree); no enclosed volume",
            check.misoriented
        ));
    }
    if is_tet_boundary || !check.is_closed() {
        return None;
    }
    let v = surface.enclosed_volume();
    if v < 0.0 {
        warnings.push(format!(
            "the triangles face inward (enclosed volume {v:e} m^3 is negative); the volume is reported as its magnitude"
        ));
    }
    Some(v.abs())
}

impl MeshInfo {
    /// Computes the summary of a loaded file.
    pub fn from_loaded(l: &Loaded) -> MeshInfo {
        let mut warnings = l.warnings.clone();
        if !l.tets.tets.is_empty() {
            let used: Vec<u32> = l.tets.tets.iter().flatten().copied().collect();
            let boundary = TriMesh {
                positions: l.tets.positions.clone(),
                triangles: l.tets.boundary_triangles(),
            };
            let check = boundary.edge_check();
            surface_volume(&boundary, &check, true, &mut warnings);
            return MeshInfo {
                format: l.format.clone(),
                vertices: l.tets.positions.len(),
                tets: l.tets.tets.len(),
                surface_triangles: boundary.triangles.len(),
                volume: Some(l.tets.total_volume_abs()),
                volume_source: VolumeSource::Tets,
                boundary_edges: check.boundary,
                nonmanifold_edges: check.nonmanifold,
                misoriented_edges: check.misoriented,
                bbox: bounding_box(&l.tets.positions, &used),
                inverted_tets: l.flipped_tets,
                warnings,
            };
        }
        let used: Vec<u32> = l.surface.triangles.iter().flatten().copied().collect();
        let check = l.surface.edge_check();
        let volume = surface_volume(&l.surface, &check, false, &mut warnings);
        MeshInfo {
            format: l.format.clone(),
            vertices: l.surface.positions.len().max(l.tets.positions.len()),
            tets: 0,
            surface_triangles: l.surface.triangles.len(),
            volume,
            volume_source: if volume.is_some() {
                VolumeSource::EnclosedSurface
            } else {
                VolumeSource::None
            },
            boundary_edges: check.boundary,
            nonmanifold_edges: check.nonmanifold,
            misoriented_edges: check.misoriented,
            bbox: bounding_box(&l.surface.positions, &used),
            inverted_tets: l.flipped_tets,
            warnings,
        }
    }
}
