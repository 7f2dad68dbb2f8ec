//! The simulation model built from a [`Scene`]: every body's vertices concatenated into one
//! structure-of-arrays model (what the GPU buffers hold), with lumped masses, fixed vertices,
//! per-tet Lamé parameters and each body's boundary surface for export. Host side, built once.

use crate::fem::rest::{lame, TetRest};
use crate::fem::thin::{cloth_elements, rod_elements, ClothMaterial, ThinElement};
use crate::scene::{
    Body, Force, Generator, MaterialModel, MeshSource, Scene, SceneError, VertexSet,
    ARCH_GAP_PER_THICKNESS,
};
use nalgebra::{Rotation3, Vector3};
use std::ops::Range;
use supple_mesh::procedural::{box_tets, cloth_grid, sphere, CellSplit};
use supple_mesh::{TetMesh, TriMesh};

/// One body's slice of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyRange {
    /// Body name from the scene.
    pub name: String,
    /// Its vertices in the model's arrays.
    pub vertices: Range<u32>,
    /// Its tets in [`SimModel::tets`].
    pub tets: Range<u32>,
    /// Its triangles in [`SimModel::triangles`] (cloth).
    pub triangles: Range<u32>,
    /// Its boundary (tets) or cloth triangles, in model vertex indices, outward.
    pub surface: Vec<[u32; 3]>,
    /// Constitutive model.
    pub model: MaterialModel,
}

/// All bodies of a scene as flat arrays (SI units).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimModel {
    /// Initial positions (m).
    pub positions: Vec<[f64; 3]>,
    /// Initial velocities (m/s).
    pub velocities: Vec<[f64; 3]>,
    /// Lumped masses (kg).
    pub masses: Vec<f64>,
    /// Inverse masses (1/kg); 0 for fixed or scripted vertices.
    pub inv_mass: Vec<f64>,
    /// Tetrahedra (model vertex indices).
    pub tets: Vec<[u32; 4]>,
    /// Lamé parameters `(μ, λ)` per tet (Pa).
    pub tet_lame: Vec<(f64, f64)>,
    /// Cloth triangles (model vertex indices).
    pub triangles: Vec<[u32; 3]>,
    /// Cloth and rod elements (membranes, hinges, springs, bends) in model vertex indices.
    pub thin_elements: Vec<ThinElement>,
    /// Per-body ranges.
    pub bodies: Vec<BodyRange>,
    /// Scripted motions (kinematic vertex sets), referenced by [`SimModel::vertex_motion`].
    pub motions: Vec<Motion>,
    /// For each vertex, the index of its scripted motion, or `u32::MAX`.
    pub vertex_motion: Vec<u32>,
    /// Constant external force on each vertex (N), from the scene's `force` entries.
    pub external_forces: Vec<[f64; 3]>,
    /// Per vertex, its body's `collider_offset` (m): clearance kept from every collider on top
    /// of the collider's own offset (empty: 0 for every vertex).
    pub collider_offsets: Vec<f64>,
}

/// A scripted rigid motion of a vertex set: at time t a vertex with initial position x₀ is at
/// `R(ω t)(x₀ − c) + c + v t`, R a rotation about `axis` (unit) through the centre `c`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Motion {
    /// Unit rotation axis (zero: no rotation).
    pub axis: [f64; 3],
    /// A point on the axis (m).
    pub center: [f64; 3],
    /// Angular velocity (rad/s).
    pub angular_velocity: f64,
    /// Translation velocity (m/s).
    pub velocity: [f64; 3],
    /// Time (s) the motion stops at (+∞: never).
    pub until: f64,
}

impl Motion {
    /// Position at time `t` (s) of the vertex that started at `x0`.
    pub fn position(&self, x0: [f64; 3], t: f64) -> [f64; 3] {
        let t = t.min(self.until);
        let c = Vector3::from(self.center);
        let d = Vector3::from(x0) - c;
        let axis = Vector3::from(self.axis);
        let rotated = if axis.norm_squared() > 0.0 {
            Rotation3::from_axis_angle(
                &nalgebra::Unit::new_normalize(axis),
                self.angular_velocity * t,
            ) * d
        } else {
            d
        };
        (rotated + c + Vector3::from(self.velocity) * t).into()
    }
}

fn err(field: String, message: String) -> SceneError {
    SceneError {
        file: "scene".into(),
        line: None,
        field: Some(field),
        message,
    }
}

enum Geometry {
    Tets(TetMesh),
    Cloth(TriMesh),
    /// A polyline's vertices, in order.
    Rod(Vec<[f64; 3]>),
}

fn geometry(i: usize, body: &Body) -> Result<Geometry, SceneError> {
    match &body.mesh {
        MeshSource::File { file } => {
            let loaded = supple_mesh::load(file)
                .map_err(|e| err(format!("body[{i}].mesh.file"), e.to_string()))?;
            if body.material.model == MaterialModel::Cloth {
                if loaded.surface.triangles.is_empty() {
                    return Err(err(
                        format!("body[{i}].mesh.file"),
                        format!("{} holds no triangles for a cloth", file.display()),
                    ));
                }
                Ok(Geometry::Cloth(loaded.surface))
            } else if !loaded.tets.tets.is_empty() {
                Ok(Geometry::Tets(loaded.tets))
            } else {
                Err(err(
                    format!("body[{i}].mesh.file"),
                    format!("{} holds no tetrahedra for a solid", file.display()),
                ))
            }
        }
        MeshSource::Arrays {
            vertices,
            tets,
            triangles,
            edges,
        } => arrays_geometry(i, body, vertices, tets, triangles, edges),
        MeshSource::Generator {
            generator,
            size,
            cells,
        } => {
            let c = cells.map(|c| c as usize);
            let half = size.map(|s| -0.5 * s);
            Ok(match generator {
                Generator::Box | Generator::Box6 => {
                    let split = if *generator == Generator::Box {
                        CellSplit::Five
                    } else {
                        CellSplit::Six
                    };
                    let cell = [
                        size[0] / c[0] as f64,
                        size[1] / c[1] as f64,
                        size[2] / c[2] as f64,
                    ];
                    Geometry::Tets(box_tets(c, cell, half, split))
                }
                Generator::Sphere => Geometry::Tets(
                    sphere([0.0; 3], size[0], c[0].max(4))
                        .map_err(|e| err(format!("body[{i}].mesh"), e.to_string()))?,
                ),
                Generator::Cloth => Geometry::Cloth(cloth_grid(
                    [c[0], c[1]],
                    [size[0], size[1]],
                    [half[0], half[1], 0.0],
                )),
                Generator::SquishyBall => Geometry::Tets(
                    crate::mesh::procedural::squishy_ball(
                        [0.0; 3],
                        size[0],
                        c[1],
                        size[1],
                        size[2],
                        c[0].max(4),
                    )
                    .map_err(|e| err(format!("body[{i}].mesh"), e.to_string()))?,
                ),
                Generator::Coil => {
                    let (l, t, r) = (size[0], size[1], size[2]);
                    let straight = box_tets(
                        [((l / t) as usize * c[0]).max(1), c[0], c[0]],
                        [t / c[0] as f64; 3],
                        [0.0; 3],
                        CellSplit::Six,
                    );
                    Geometry::Tets(crate::mesh::procedural::coil(
                        &straight,
                        r,
                        0.5 * t,
                        0.0,
                        1.5 * t,
                    ))
                }
                Generator::Tube => Geometry::Cloth(supple_mesh::cloth_shapes::cloth_tube(
                    size[0], size[1], c[0], c[1],
                )),
                Generator::Funnel => Geometry::Cloth(supple_mesh::cloth_shapes::cloth_funnel(
                    size[0], size[1], size[2], c[0], c[1],
                )),
                Generator::KnotTube => {
                    let curve =
                        supple_mesh::cloth_shapes::overhand_knot_curve(size[0], size[2], c[1]);
                    Geometry::Cloth(supple_mesh::cloth_shapes::swept_tube(&curve, size[1], c[0]))
                }
                Generator::ReefKnot | Generator::BowKnot => {
                    use supple_mesh::cloth_shapes::{reef_knot_curves, two_tubes, KnotArms};
                    let arms = if *generator == Generator::ReefKnot {
                        KnotArms::Tails
                    } else {
                        KnotArms::Ears
                    };
                    let curves = reef_knot_curves(size[0], size[2], c[1], arms);
                    Geometry::Cloth(two_tubes(&curves, size[1], c[0]))
                }
                Generator::Arch => Geometry::Tets(crate::mesh::procedural::arch(
                    size[0],
                    size[1],
                    size[2],
                    c[0],
                    c[1],
                    c[2],
                    size[1] * ARCH_GAP_PER_THICKNESS,
                )),
                Generator::Rod => Geometry::Rod(
                    (0..=c[0])
                        .map(|k| [half[0] + size[0] * k as f64 / c[0] as f64, 0.0, 0.0])
                        .collect(),
                ),
            })
        }
    }
}

/// The geometry of a body given as arrays, checked with the mesh files' messages (located at
/// `body[i].mesh.vertices`, `.tets`, …); the arrays the material needs must be there.
fn arrays_geometry(
    i: usize,
    body: &Body,
    vertices: &[[f64; 3]],
    tets: &[[u32; 4]],
    triangles: &[[u32; 3]],
    edges: &[[u32; 2]],
) -> Result<Geometry, SceneError> {
    let field = format!("body[{i}].mesh");
    supple_mesh::check_arrays(&field, vertices, tets, triangles, edges).map_err(|e| {
        // "body[0].mesh.tets: index out of range: tet 3 references …" → field + message.
        let at = e.location().file.clone();
        let text = e.to_string();
        let message = text.strip_prefix(&format!("{at}: ")).unwrap_or(&text);
        err(at.clone(), message.to_string())
    })?;
    let need = |array: &str, what: &str| {
        err(
            format!("{field}.{array}"),
            format!("a {what} body needs {array} (none given)"),
        )
    };
    match body.material.model {
        MaterialModel::Cloth if triangles.is_empty() => Err(need("triangles", "cloth")),
        MaterialModel::Cloth => Ok(Geometry::Cloth(TriMesh {
            positions: vertices.to_vec(),
            triangles: triangles.to_vec(),
        })),
        MaterialModel::Rod => {
            let n = vertices.len();
            if edges.len() + 1 != n || n < 2 {
                return Err(err(
                    format!("{field}.edges"),
                    format!(
                        "a rod is one open polyline through its vertices in order: {} vertices \
                         need {} edges [k, k+1], got {}",
                        n,
                        n.saturating_sub(1),
                        edges.len()
                    ),
                ));
            }
            let mut seen = vec![false; n - 1];
            for (k, e) in edges.iter().enumerate() {
                let (a, b) = (e[0].min(e[1]) as usize, e[0].max(e[1]) as usize);
                if b != a + 1 || seen[a] {
                    return Err(err(
                        format!("{field}.edges"),
                        format!(
                            "edge {k} {e:?}: a rod is one open polyline through its vertices \
                             in order (edges [k, k+1], each once)"
                        ),
                    ));
                }
                seen[a] = true;
            }
            Ok(Geometry::Rod(vertices.to_vec()))
        }
        _ if tets.is_empty() => Err(need("tets", "solid")),
        _ => Ok(Geometry::Tets(TetMesh {
            positions: vertices.to_vec(),
            tets: tets.to_vec(),
        })),
    }
}

fn in_set(set: &VertexSet, local: u32, p: &[f64; 3]) -> bool {
    if let Some(r) = &set.region {
        return (0..3).all(|k| p[k] >= r.min[k] && p[k] <= r.max[k]);
    }
    set.indices.as_ref().is_some_and(|ix| ix.contains(&local))
}

/// The constant external force on each vertex (N) of a body whose vertices (after its transform)
/// are `positions` and whose boundary triangles (body-local indices) are `surface`: each
/// entry's `total` spread evenly over its set, or its `traction` (Pa) integrated over the
/// boundary triangles whose three vertices are all in the set (area / 3 per vertex). Errors
/// name the field `field(k)` of the entry k at fault.
pub fn distribute_loads(
    field: &dyn Fn(usize) -> String,
    forces: &[Force],
    positions: &[[f64; 3]],
    surface: &[[u32; 3]],
) -> Result<Vec<[f64; 3]>, SceneError> {
    let nv = positions.len();
    let mut fext = vec![[0.0f64; 3]; nv];
    for (k, fo) in forces.iter().enumerate() {
        let members: Vec<bool> = positions
            .iter()
            .enumerate()
            .map(|(v, p)| in_set(&fo.vertices, v as u32, p))
            .collect();
        let count = members.iter().filter(|&&b| b).count();
        if count == 0 {
            return Err(err(field(k), "selects no vertex".into()));
        }
        if let Some(total) = fo.total {
            for v in (0..nv).filter(|&v| members[v]) {
                for c in 0..3 {
                    fext[v][c] += total[c] / count as f64;
                }
            }
        }
        if let Some(traction) = fo.traction {
            let mut area_total = 0.0;
            for t in surface {
                if t.iter().all(|&v| members[v as usize]) {
                    let [a, b, c] = t.map(|v| Vector3::from(positions[v as usize]));
                    let area = 0.5 * (b - a).cross(&(c - a)).norm();
                    area_total += area;
                    for &v in t {
                        for c in 0..3 {
                            fext[v as usize][c] += traction[c] * area / 3.0;
                        }
                    }
                }
            }
            if area_total == 0.0 {
                return Err(err(
                    field(k),
                    "the set covers no boundary face for the traction".into(),
                ));
            }
        }
    }
    Ok(fext)
}

impl SimModel {
    /// Per vertex, the clearance (m) it keeps from every collider on top of the collider's own
    /// offset ([`SimModel::collider_offsets`], 0 where unset).
    pub fn vertex_collider_offsets(&self) -> Vec<f64> {
        (0..self.positions.len())
            .map(|i| self.collider_offsets.get(i).copied().unwrap_or(0.0))
            .collect()
    }

    /// Centreline segments `[a, b]` (consecutive vertices of each rod polyline, model vertex
    /// indices): the collision edges of the rods.
    pub fn curve_segments(&self) -> Vec<[u32; 2]> {
        self.bodies
            .iter()
            .filter(|b| b.model == MaterialModel::Rod)
            .flat_map(|b| {
                let r = b.vertices.clone();
                r.clone().zip(r.skip(1)).map(|(a, c)| [a, c])
            })
            .collect()
    }

    /// Builds the model: generates or loads every body, applies its transform, lumps masses and
    /// marks fixed and scripted vertices.
    pub fn from_scene(scene: &Scene) -> Result<SimModel, SceneError> {
        let mut m = SimModel::default();
        for (i, body) in scene.bodies.iter().enumerate() {
            let geo = geometry(i, body)?;
            let r = body.rotation_deg.map(f64::to_radians);
            let rot = Rotation3::from_euler_angles(r[0], r[1], r[2]);
            let t = Vector3::from(body.translation);
            let xf =
                |p: &[f64; 3]| -> [f64; 3] { (rot * (Vector3::from(*p) * body.scale) + t).into() };
            let base = m.positions.len() as u32;
            let (positions, surface_local, tets_local, tris_local): (
                Vec<[f64; 3]>,
                Vec<[u32; 3]>,
                Vec<[u32; 4]>,
                Vec<[u32; 3]>,
            ) = match &geo {
                Geometry::Tets(tm) => (
                    tm.positions.iter().map(xf).collect(),
                    tm.boundary_triangles(),
                    tm.tets.clone(),
                    vec![],
                ),
                Geometry::Cloth(tri) => (
                    tri.positions.iter().map(xf).collect(),
                    tri.triangles.clone(),
                    vec![],
                    tri.triangles.clone(),
                ),
                Geometry::Rod(points) => (points.iter().map(xf).collect(), vec![], vec![], vec![]),
            };
            let nv = positions.len();
            let mut mass = vec![0.0; nv];
            let (mu, lambda) = lame(body.material.youngs_modulus, body.material.poisson_ratio);
            let tet_start = m.tets.len() as u32;
            for (k, tet) in tets_local.iter().enumerate() {
                let x = tet.map(|v| Vector3::from(positions[v as usize]));
                let rest = TetRest::new(&x).ok_or_else(|| {
                    err(format!("body[{i}].mesh"), format!("tet {k} is degenerate"))
                })?;
                for &v in tet {
                    mass[v as usize] += body.material.density * rest.volume / 4.0;
                }
                m.tets.push(tet.map(|v| v + base));
                let c = x.iter().sum::<Vector3<f64>>() / 4.0;
                let region =
                    body.material_region.iter().rev().find(|r| {
                        (0..3).all(|k| c[k] >= r.region.min[k] && c[k] <= r.region.max[k])
                    });
                m.tet_lame.push(match region {
                    Some(r) => lame(r.youngs_modulus, body.material.poisson_ratio),
                    None => (mu, lambda),
                });
            }
            let tri_start = m.triangles.len() as u32;
            let thickness = body.material.thickness.unwrap_or(0.0);
            for tri in &tris_local {
                let [a, b, c] = tri.map(|v| Vector3::from(positions[v as usize]));
                let area = 0.5 * (b - a).cross(&(c - a)).norm();
                for &v in tri {
                    mass[v as usize] += body.material.density * thickness * area / 3.0;
                }
                m.triangles.push(tri.map(|v| v + base));
            }
            let mat = &body.material;
            match &geo {
                Geometry::Cloth(tri) => {
                    let cloth = ClothMaterial {
                        youngs_modulus: mat.youngs_modulus,
                        poisson_ratio: mat.poisson_ratio,
                        thickness,
                        bending_stiffness: mat.bending_stiffness,
                    };
                    let elements = cloth_elements(tri, &positions, base, &cloth)
                        .map_err(|e| err(format!("body[{i}].mesh"), e))?;
                    m.thin_elements.extend(elements);
                }
                Geometry::Rod(_) => {
                    let r = mat.radius.unwrap_or(0.0);
                    let area = std::f64::consts::PI * r * r;
                    let ei = mat
                        .bending_stiffness
                        .unwrap_or(mat.youngs_modulus * std::f64::consts::PI * r.powi(4) / 4.0);
                    for k in 0..nv.saturating_sub(1) {
                        let l =
                            (Vector3::from(positions[k + 1]) - Vector3::from(positions[k])).norm();
                        mass[k] += 0.5 * mat.density * area * l;
                        mass[k + 1] += 0.5 * mat.density * area * l;
                    }
                    m.thin_elements.extend(rod_elements(
                        &positions,
                        base,
                        mat.youngs_modulus,
                        r,
                        ei,
                    ));
                }
                Geometry::Tets(_) => {}
            }
            let mut motion_of = vec![u32::MAX; nv];
            for mo in &body.motion {
                let axis = mo.axis.unwrap_or([0.0; 3]);
                let l = Vector3::from(axis).norm();
                m.motions.push(Motion {
                    axis: if l > 0.0 {
                        [axis[0] / l, axis[1] / l, axis[2] / l]
                    } else {
                        [0.0; 3]
                    },
                    center: mo.center,
                    angular_velocity: mo.angular_velocity,
                    velocity: mo.velocity,
                    until: mo.until.unwrap_or(f64::INFINITY),
                });
                let id = (m.motions.len() - 1) as u32;
                for (v, p) in positions.iter().enumerate() {
                    if in_set(&mo.vertices, v as u32, p) {
                        motion_of[v] = id;
                    }
                }
            }
            let mut fixed = vec![false; nv];
            for set in body
                .fixed
                .iter()
                .chain(body.motion.iter().map(|mo| &mo.vertices))
            {
                for (v, p) in positions.iter().enumerate() {
                    fixed[v] |= in_set(set, v as u32, p);
                }
            }
            for (k, set) in body.fixed.iter().enumerate() {
                if let Some(ix) = &set.indices {
                    if let Some(bad) = ix.iter().find(|&&v| v as usize >= nv) {
                        return Err(err(
                            format!("body[{i}].fixed[{k}].indices"),
                            format!("vertex {bad} beyond the body's {nv} vertices"),
                        ));
                    }
                }
                if !positions
                    .iter()
                    .enumerate()
                    .any(|(v, p)| in_set(set, v as u32, p))
                {
                    return Err(err(
                        format!("body[{i}].fixed[{k}]"),
                        "selects no vertex".into(),
                    ));
                }
            }
            if let Some(v) = mass.iter().position(|&x| !(x > 0.0)) {
                return Err(err(
                    format!("body[{i}].mesh"),
                    format!("vertex {v} belongs to no element (zero mass)"),
                ));
            }
            m.inv_mass.extend(
                mass.iter()
                    .zip(&fixed)
                    .map(|(&ms, &f)| if f { 0.0 } else { 1.0 / ms }),
            );
            let fext = distribute_loads(
                &|k| format!("body[{i}].force[{k}]"),
                &body.force,
                &positions,
                &surface_local,
            )?;
            m.external_forces.extend(fext);
            m.collider_offsets
                .extend(std::iter::repeat_n(body.collider_offset, nv));
            m.masses.extend(mass);
            m.vertex_motion.extend(motion_of);
            m.velocities.extend(std::iter::repeat_n(body.velocity, nv));
            m.positions.extend(positions);
            m.bodies.push(BodyRange {
                name: body.name.clone(),
                vertices: base..base + nv as u32,
                tets: tet_start..m.tets.len() as u32,
                triangles: tri_start..m.triangles.len() as u32,
                surface: surface_local.iter().map(|t| t.map(|v| v + base)).collect(),
                model: body.material.model,
            });
        }
        Ok(m)
    }

    /// Whether any vertex follows a scripted motion.
    pub fn has_motion(&self) -> bool {
        self.vertex_motion.iter().any(|&m| m != u32::MAX)
    }

    /// Total mass (kg).
    pub fn total_mass(&self) -> f64 {
        self.masses.iter().sum()
    }

    /// Every body's surface triangles (model vertex indices), body after body.
    pub fn surface_triangles(&self) -> Vec<[u32; 3]> {
        self.bodies
            .iter()
            .flat_map(|b| b.surface.iter().copied())
            .collect()
    }

    /// The body each model vertex belongs to (index into `bodies`).
    pub fn vertex_bodies(&self) -> Vec<u32> {
        let mut body = vec![0u32; self.positions.len()];
        for (k, b) in self.bodies.iter().enumerate() {
            for v in b.vertices.clone() {
                body[v as usize] = k as u32;
            }
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scene(name: &str) -> Scene {
        Scene::load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../scenes")
                .join(name),
            &[],
        )
        .unwrap()
    }

    #[test]
    fn tet_cube_drop_matches_the_peer_benchmark() {
        let m = SimModel::from_scene(&scene("tet_cube_drop.toml")).unwrap();
        assert_eq!(m.positions.len(), 1331);
        assert_eq!(m.tets.len(), 5000);
        assert_eq!(m.bodies[0].surface.len(), 1200);
        assert!(
            (m.total_mass() - 125.0).abs() < 1e-9,
            "0.5 m cube of 1000 kg/m^3"
        );
        let zmin = m
            .positions
            .iter()
            .map(|p| p[2])
            .fold(f64::INFINITY, f64::min);
        let xmid: f64 = m.positions.iter().map(|p| p[0]).sum::<f64>() / 1331.0;
        assert!((zmin - 0.10).abs() < 1e-12 && xmid.abs() < 1e-12);
        assert!(m.inv_mass.iter().all(|&w| w > 0.0));
        // Element lumping: 125 kg over 1331 vertices. (The peer script instead gives every vertex
        // one cell's mass, 0.125 kg, 166 kg in total; see ../shared/peers/README.md.)
        assert!((m.total_mass() / 1331.0 - 0.0939).abs() < 1e-3);
    }

    #[test]
    fn fixed_regions_and_cloth_masses() {
        let m = SimModel::from_scene(&scene("hanging_beam.toml")).unwrap();
        assert_eq!(
            m.inv_mass.iter().filter(|&&w| w == 0.0).count(),
            9,
            "a 3x3 vertex end face is clamped"
        );
        let m = SimModel::from_scene(&scene("cloth_pinned.toml")).unwrap();
        assert_eq!(m.triangles.len(), 32 * 32 * 2);
        assert_eq!(
            m.inv_mass.iter().filter(|&&w| w == 0.0).count(),
            2,
            "two pinned corners"
        );
        assert!((m.total_mass() - 200.0 * 0.001 * 1.0).abs() < 1e-9);
        let m = SimModel::from_scene(&scene("sheet_with_cube.toml")).unwrap();
        assert_eq!(m.bodies.len(), 2);
        assert_eq!(m.bodies[1].vertices.start as usize, 21 * 21 * 2);
        assert!(m.tets[m.bodies[1].tets.start as usize]
            .iter()
            .all(|&v| v >= m.bodies[1].vertices.start));
    }

    #[test]
    fn scripted_motions_stop_at_until() {
        let m = Motion {
            axis: [1.0, 0.0, 0.0],
            center: [0.0; 3],
            angular_velocity: 1.0,
            velocity: [0.5, 0.0, 0.0],
            until: 2.0,
        };
        let p = [0.0, 1.0, 0.0];
        assert_eq!(m.position(p, 3.0), m.position(p, 2.0));
        assert!((m.position(p, 2.0)[0] - 1.0).abs() < 1e-12);
        assert_ne!(m.position(p, 1.0), m.position(p, 2.0));
    }

    #[test]
    fn scripted_motions_rotate_about_their_axis() {
        let m = SimModel::from_scene(&scene("twisting_beam.toml")).unwrap();
        assert_eq!(m.motions.len(), 2);
        let left: Vec<usize> = (0..m.positions.len())
            .filter(|&v| m.vertex_motion[v] == 0)
            .collect();
        assert_eq!(left.len(), 25, "a 5x5 end face");
        assert!(left.iter().all(|&v| m.inv_mass[v] == 0.0));
        // Half a turn (1 s at pi rad/s) about the beam axis maps (y, z - 1) to (-y, -(z - 1)).
        let v = left[7];
        let p = m.positions[v];
        let q = m.motions[0].position(p, 1.0);
        assert!(
            (q[0] - p[0]).abs() < 1e-12
                && (q[1] + p[1]).abs() < 1e-12
                && (q[2] - 1.0 + (p[2] - 1.0)).abs() < 1e-12
        );
    }

    #[test]
    fn tractions_integrate_over_the_loaded_face() {
        let m = SimModel::from_scene(&scene("beam_traction.toml")).unwrap();
        let total: f64 = m.external_forces.iter().map(|f| f[2]).sum();
        // -2000 Pa over the 1.0 m x 0.1 m top face.
        assert!((total + 200.0).abs() < 1e-9, "{total}");
    }

    #[test]
    fn empty_selections_and_bad_indices_are_errors() {
        let mut s = scene("hanging_beam.toml");
        s.bodies[0].fixed[0].region.as_mut().unwrap().min = [5.0, 5.0, 5.0];
        s.bodies[0].fixed[0].region.as_mut().unwrap().max = [6.0, 6.0, 6.0];
        let e = SimModel::from_scene(&s).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("body[0].fixed[0]"), "{e}");
        let mut s = scene("hanging_beam.toml");
        s.bodies[0].fixed[0] = VertexSet {
            region: None,
            indices: Some(vec![1_000_000]),
        };
        let e = SimModel::from_scene(&s).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("body[0].fixed[0].indices"), "{e}");
    }

    /// The model's whole boundary surface (every body) for the exact checker.
    fn checked_surface(m: &SimModel) -> crate::intersection_check::Surface {
        let tris: Vec<[u32; 3]> = m.bodies.iter().flat_map(|b| b.surface.clone()).collect();
        crate::intersection_check::Surface::new(m.positions.len(), &tris).unwrap()
    }

    fn one_body(generator: &str, size: &str, cells: &str) -> SimModel {
        let text = format!(
            "[[body]]\nname = \"t\"\nmesh = {{ generator = \"{generator}\", size = {size}, cells = {cells} }}\n\
             material = {{ model = \"cloth\", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }}\n"
        );
        SimModel::from_scene(&Scene::parse(&text, "t.toml", &[]).unwrap()).unwrap()
    }

    /// An open cloth mesh at rest: intersection-free, no two non-adjacent primitives within
    /// `min_gap` m, manifold, with `boundary_edges` open boundary edges.
    fn assert_open_cloth_at_rest(m: &SimModel, g: &str, min_gap: f64, boundary_edges: usize) {
        use crate::intersection_check::{frame_intersections, min_distance};
        let s = checked_surface(m);
        assert!(frame_intersections(&s, &m.positions).is_empty(), "{g}");
        let d = min_distance(&s, &m.positions);
        assert!(d > min_gap, "{g}: closest non-adjacent primitives {d} m");
        let mesh = supple_mesh::TriMesh {
            positions: m.positions.clone(),
            triangles: m.triangles.clone(),
        };
        assert_eq!(mesh.nonmanifold_edges(), 0, "{g}");
        assert_eq!(
            mesh.boundary_edges().len(),
            boundary_edges,
            "{g}: open end rings"
        );
    }

    #[test]
    fn cloth_tube_funnel_and_knot_meshes_rest_without_intersection() {
        for (g, size, cells, around, nv, nt, min_gap) in [
            (
                "tube",
                "[0.1, 0.5, 0.0]",
                "[24, 20, 1]",
                24,
                21 * 24,
                2 * 24 * 20,
                0.01,
            ),
            (
                "funnel",
                "[0.25, 0.07, 0.25]",
                "[18, 8, 1]",
                18,
                9 * 18,
                2 * 18 * 8,
                0.01,
            ),
            // Knot: 1.2 scales between strands minus two radii (24 mm) less the facets' sag.
            (
                "knot-tube",
                "[0.04, 0.012, 0.15]",
                "[8, 160, 1]",
                8,
                161 * 8,
                2 * 8 * 160,
                0.003,
            ),
        ] {
            let m = one_body(g, size, cells);
            assert_eq!((m.positions.len(), m.triangles.len()), (nv, nt), "{g}");
            assert_eq!(
                m.bodies[0].surface, m.triangles,
                "{g}: a cloth's surface is itself"
            );
            assert_open_cloth_at_rest(&m, g, min_gap, 2 * around);
        }
    }

    #[test]
    fn reef_and_bow_knot_meshes_are_two_tubes_at_rest_without_intersection() {
        for g in ["reef-knot", "bow-knot"] {
            // Scale 30 mm, radius 10 mm: centre lines ~27 mm apart, ~7 mm between the tubes; the
            // closest primitives are neighbours on one tube (as for the knot tube).
            let m = one_body(g, "[0.03, 0.01, 0.1]", "[8, 96, 1]");
            assert_eq!(
                (m.positions.len(), m.triangles.len()),
                (2 * 97 * 8, 2 * 2 * 8 * 96),
                "{g}"
            );
            assert_open_cloth_at_rest(&m, g, 0.003, 4 * 8);
            let (a, b) = m.positions.split_at(97 * 8);
            let between = a
                .iter()
                .flat_map(|p| {
                    b.iter()
                        .map(move |q| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>())
                })
                .fold(f64::INFINITY, f64::min)
                .sqrt();
            assert!(
                between > 0.005,
                "{g}: the tubes' vertices {between} m apart"
            );
            // Rope A's end rings (its first and last) on −x, rope B's on +x.
            let ring_x = |first: usize| {
                m.positions[first..first + 8]
                    .iter()
                    .map(|p| p[0])
                    .sum::<f64>()
                    / 8.0
            };
            for (first, sign) in [
                (0, -1.0),
                (96 * 8, -1.0),
                (97 * 8, 1.0),
                (97 * 8 + 96 * 8, 1.0),
            ] {
                assert!(sign * ring_x(first) > 0.05, "{g}: ring at {first}");
            }
        }
    }

    #[test]
    fn paper_scenes_start_intersection_free() {
        use crate::intersection_check::{frame_intersections, min_distance};
        for name in [
            "paper_blade.toml",
            "paper_tube_twist.toml",
            "paper_funnel.toml",
            "paper_knot.toml",
            "paper_reef_knot.toml",
            "paper_bow_knot.toml",
        ] {
            let m = SimModel::from_scene(&scene(name)).unwrap();
            let s = checked_surface(&m);
            assert!(frame_intersections(&s, &m.positions).is_empty(), "{name}");
            let d = min_distance(&s, &m.positions);
            assert!(d > 0.002, "{name}: closest primitives {d} m");
        }
    }
}
