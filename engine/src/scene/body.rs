//! `[[body]]`: a deformable body's geometry, material, placement, boundary conditions, scripted
//! motion and loads.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One deformable body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Body {
    /// Name used in reports.
    pub name: String,
    /// Where the geometry comes from.
    pub mesh: MeshSource,
    /// Constitutive model and parameters.
    pub material: Material,
    /// Translation applied after scaling and rotation (m).
    #[serde(default, deserialize_with = "super::exact::array")]
    pub translation: [f64; 3],
    /// Rotation as XYZ Euler angles (degrees).
    #[serde(default, deserialize_with = "super::exact::array")]
    pub rotation_deg: [f64; 3],
    /// Uniform scale.
    #[serde(default = "one")]
    pub scale: f64,
    /// Initial velocity (m/s).
    #[serde(default, deserialize_with = "super::exact::array")]
    pub velocity: [f64; 3],
    /// Vertex sets held fixed.
    #[serde(default)]
    pub fixed: Vec<VertexSet>,
    /// Scripted kinematic motion of vertex sets.
    #[serde(default)]
    pub motion: Vec<ScriptedMotion>,
    /// External forces.
    #[serde(default)]
    pub force: Vec<Force>,
    /// Regions of a solid with their own Young's modulus (tets whose centroid lies inside; the
    /// last matching region wins): heterogeneous bodies bonded in one mesh.
    #[serde(default)]
    pub material_region: Vec<MaterialRegion>,
    /// Clearance (m) this body keeps from every collider on top of the collider's own `offset`
    /// (e.g. half a cloth's thickness); ≥ 0.
    #[serde(default)]
    pub collider_offset: f64,
}

/// A region of a solid body with its own stiffness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialRegion {
    /// Axis-aligned box (m, after the body transform).
    pub region: RegionBox,
    /// Young's modulus inside it (Pa).
    pub youngs_modulus: f64,
}

fn one() -> f64 {
    1.0
}

/// Geometry of a body: a file, a procedural generator or arrays.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MeshSource {
    /// A mesh file (any format `supple mesh info` reads), relative to the scene file.
    File {
        /// Path of the mesh file.
        file: PathBuf,
    },
    /// A procedural mesh.
    Generator {
        /// Which generator.
        generator: Generator,
        /// Overall size (m): box/beam extents, `[radius, _, _]` for spheres; see [`Generator`]
        /// for the others.
        size: [f64; 3],
        /// Cells per axis (boxes and beams) or resolution (sphere: `[n, _, _]`).
        #[serde(default = "default_cells")]
        cells: [u32; 3],
    },
    /// A mesh given as arrays (bodies built from code, e.g. NumPy arrays from Python): 0-based
    /// vertex indices, used as given (checked like a mesh file, but a degenerate or inverted tet
    /// is an error). Which arrays a body needs follows its material: tets for solids,
    /// triangles for cloth, edges for rods (one open polyline through the vertices in order:
    /// `[0, 1], [1, 2], …`). In TOML: `mesh = { vertices = [[x, y, z], …], tets = [[a, b, c,
    /// d], …] }`.
    Arrays {
        /// Vertex positions (m, before the body transform).
        vertices: Vec<[f64; 3]>,
        /// Tetrahedra (solids; positive volume).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tets: Vec<[u32; 4]>,
        /// Triangles (cloth).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        triangles: Vec<[u32; 3]>,
        /// Segments between two vertices (rods).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        edges: Vec<[u32; 2]>,
    },
}

fn default_cells() -> [u32; 3] {
    [4, 4, 4]
}

/// Every field `body[i].mesh` may hold, each checked for its type and length on its own (an
/// untagged enum would only say that the table matches neither form).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MeshFields {
    #[serde(default)]
    file: Option<PathBuf>,
    #[serde(default)]
    generator: Option<Generator>,
    #[serde(default, deserialize_with = "super::exact::optional_array")]
    size: Option<[f64; 3]>,
    #[serde(default, deserialize_with = "super::exact::optional_array")]
    cells: Option<[u32; 3]>,
    #[serde(default)]
    vertices: Option<Vec<[f64; 3]>>,
    #[serde(default)]
    tets: Option<Vec<[u32; 4]>>,
    #[serde(default)]
    triangles: Option<Vec<[u32; 3]>>,
    #[serde(default)]
    edges: Option<Vec<[u32; 2]>>,
}

impl<'de> Deserialize<'de> for MeshSource {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<MeshSource, D::Error> {
        use serde::de::Error;
        let m = MeshFields::deserialize(d)?;
        let has_topology = m.tets.is_some() || m.triangles.is_some() || m.edges.is_some();
        if m.vertices.is_some() || has_topology {
            if m.file.is_some() || m.generator.is_some() || m.size.is_some() || m.cells.is_some() {
                return Err(D::Error::custom(
                    "give either arrays (`vertices` with `tets`, `triangles` or `edges`) or \
                     `file` or `generator`, not both",
                ));
            }
            let vertices = m
                .vertices
                .ok_or_else(|| D::Error::custom("a mesh given as arrays needs `vertices` (m)"))?;
            return Ok(MeshSource::Arrays {
                vertices,
                tets: m.tets.unwrap_or_default(),
                triangles: m.triangles.unwrap_or_default(),
                edges: m.edges.unwrap_or_default(),
            });
        }
        match (m.file, m.generator) {
            (Some(file), None) => {
                if m.size.is_some() || m.cells.is_some() {
                    return Err(D::Error::custom(
                        "`size` and `cells` belong to a generator, not to a mesh `file`",
                    ));
                }
                Ok(MeshSource::File { file })
            }
            (None, Some(generator)) => Ok(MeshSource::Generator {
                generator,
                size: m
                    .size
                    .ok_or_else(|| D::Error::custom("a generator needs `size` (m)"))?,
                cells: m.cells.unwrap_or_else(default_cells),
            }),
            (Some(_), Some(_)) => Err(D::Error::custom(
                "give either `file` or `generator`, not both",
            )),
            (None, None) => Err(D::Error::custom(
                "give `file = \"…\"`, `generator = \"…\"` with `size`, or `vertices` with \
                 `tets`, `triangles` or `edges`",
            )),
        }
    }
}

/// Width of an `"arch"`'s joints as a fraction of its thickness (0.5 mm for the paper's 0.1 m
/// stones): barrier contact needs the stones apart at the start.
pub const ARCH_GAP_PER_THICKNESS: f64 = 1.0 / 200.0;

/// Procedural mesh generators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Generator {
    /// Tetrahedralized box with 5 tets per cell, centred on the body origin.
    Box,
    /// Tetrahedralized box with 6 tets per cell, centred on the body origin.
    Box6,
    /// Tetrahedralized ball centred on the body origin.
    Sphere,
    /// Rectangular cloth grid in the XY plane, centred on the body origin.
    Cloth,
    /// Straight rod along X of length `size[0]` with `cells[0]` segments, centred on the body
    /// origin.
    Rod,
    /// Masonry arch of separate wedge-shaped voussoirs in the body's x–z plane (springing line
    /// on z = 0 through the body origin, crown on +z): `size = [inner radius, thickness, depth]`,
    /// `cells = [voussoirs (≥ 3), cells along each voussoir's arc, cells through the thickness
    /// and the depth]`; the joints (and the feet above z = 0) are open by thickness / 200.
    Arch,
    /// Squishy ball (sphere with tentacles): `size = [radius, tentacle_length,
    /// tentacle_radius]`, `cells = [resolution, tentacles, _]`, centred on the body origin.
    SquishyBall,
    /// Coiled noodle: a square beam `size = [length, thickness, coil_radius]` with
    /// `cells = [cells across the thickness, _, _]`, coiled about the body's z axis as a helix
    /// rising 1.5 thicknesses per turn (no self-intersection at rest).
    Coil,
    /// Open cloth cylinder along x centred on the body origin: `size = [radius, length, _]`,
    /// `cells = [around (≥ 3), along, _]`.
    Tube,
    /// Open cloth truncated cone about z centred on the body origin: `size = [top radius,
    /// bottom radius, height]` (bottom at z = −height/2), `cells = [around (≥ 3), along, _]`.
    Funnel,
    /// Open cloth tube along an overhand knot (a trefoil opened at one lobe, with straight tails):
    /// `size = [knot scale, tube radius (< scale/2), tail length]`, `cells = [around (≥ 3),
    /// segments along the centre line (≥ 8), _]`; the knot spans about 6 scales.
    KnotTube,
    /// Two open cloth tubes tied in a loose reef knot (interlocked bights, straight arms along
    /// ±x): `size = [knot scale, tube radius (< 0.4 scale), arm length beyond the knot]`,
    /// `cells = [around (≥ 3), segments along each tube (≥ 8), _]`; the first tube's vertices
    /// first, each tube's first and last rings ending its arms.
    ReefKnot,
    /// Two open cloth tubes tied in a bow-knot-like knot: the reef knot's arms widened into ears
    /// whose two ends face each other across a gap at the ear's tip; `size` and `cells` as for
    /// `"reef-knot"`, `size[2]` the length of the ears' straight part.
    BowKnot,
}

impl Generator {
    /// Whether the generator makes a cloth surface (used with the `"cloth"` material).
    pub fn is_cloth(self) -> bool {
        matches!(
            self,
            Generator::Cloth
                | Generator::Tube
                | Generator::Funnel
                | Generator::KnotTube
                | Generator::ReefKnot
                | Generator::BowKnot
        )
    }
}

/// Constitutive model and parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// The model.
    pub model: MaterialModel,
    /// Young's modulus (Pa).
    pub youngs_modulus: f64,
    /// Poisson ratio (dimensionless, in (-1, 0.5)).
    pub poisson_ratio: f64,
    /// Mass density (kg/m³; for cloth, of the sheet material).
    pub density: f64,
    /// Cloth thickness (m).
    #[serde(default)]
    pub thickness: Option<f64>,
    /// Bending stiffness: cloth N·m (default E t³ / 12(1 − ν²)), rods N·m² (default E π r⁴/4).
    #[serde(default)]
    pub bending_stiffness: Option<f64>,
    /// Rod cross-section radius (m).
    #[serde(default)]
    pub radius: Option<f64>,
}

/// Constitutive models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MaterialModel {
    /// Stable Neo-Hookean solid.
    StableNeoHookean,
    /// St. Venant–Kirchhoff solid.
    Stvk,
    /// Corotated linear solid.
    Corotated,
    /// Membrane + bending shell.
    Cloth,
    /// Stretch + bend rod.
    Rod,
}

/// A set of vertices: by region or by index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VertexSet {
    /// Vertices inside this axis-aligned box (m, after the body transform).
    #[serde(default)]
    pub region: Option<RegionBox>,
    /// Vertex indices.
    #[serde(default)]
    pub indices: Option<Vec<u32>>,
}

/// An axis-aligned box (m).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionBox {
    /// Lower corner (m).
    #[serde(deserialize_with = "super::exact::array")]
    pub min: [f64; 3],
    /// Upper corner (m).
    #[serde(deserialize_with = "super::exact::array")]
    pub max: [f64; 3],
}

/// Scripted motion of a vertex set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedMotion {
    /// The moved vertices.
    pub vertices: VertexSet,
    /// Constant velocity (m/s).
    #[serde(default, deserialize_with = "super::exact::array")]
    pub velocity: [f64; 3],
    /// Rotation axis direction (normalised on use).
    #[serde(default, deserialize_with = "super::exact::optional_array")]
    pub axis: Option<[f64; 3]>,
    /// A point on the rotation axis (m).
    #[serde(default, deserialize_with = "super::exact::array")]
    pub center: [f64; 3],
    /// Angular velocity about the axis (rad/s).
    #[serde(default)]
    pub angular_velocity: f64,
    /// Simulated time (s) at which the motion stops: the set then stays where it got (none:
    /// never stops).
    #[serde(default)]
    pub until: Option<f64>,
}

/// An external force on a vertex set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Force {
    /// The loaded vertices.
    pub vertices: VertexSet,
    /// Total force spread evenly over the set (N).
    #[serde(default, deserialize_with = "super::exact::optional_array")]
    pub total: Option<[f64; 3]>,
    /// Traction over the set's boundary area (Pa).
    #[serde(default, deserialize_with = "super::exact::optional_array")]
    pub traction: Option<[f64; 3]>,
}
