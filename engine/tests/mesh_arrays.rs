//! Bodies given as arrays (`MeshSource::Arrays`): the model they build, the checks and their
//! messages, and the scene's TOML form. CPU only (no device).

use supple::mesh::procedural::{box_tets, cloth_grid, CellSplit};
use supple::model::SimModel;
use supple::scene::{Body, Generator, Material, MaterialModel, MeshSource, Scene};
use supple::SimulationBuilder;

fn solid() -> Material {
    Material::new(MaterialModel::StableNeoHookean, 2e5, 0.3, 1000.0)
}

/// The generator's 2×2×2 box as arrays.
fn box_arrays() -> MeshSource {
    let b = box_tets([2, 2, 2], [0.1; 3], [-0.1; 3], CellSplit::Five);
    MeshSource::arrays(b.positions, b.tets, vec![], vec![])
}

fn model_of(mesh: MeshSource, material: Material) -> Result<SimModel, supple::scene::SceneError> {
    let scene = SimulationBuilder::new()
        .body(Body::new("b", mesh, material).translated([0.0, 0.0, 0.3]))
        .ground_plane([0.0, 0.0, 1.0], 0.0)
        .into_scene()?;
    SimModel::from_scene(&scene)
}

#[test]
fn arrays_build_the_same_model_as_the_generator() {
    let from_arrays = model_of(box_arrays(), solid()).unwrap();
    let generated = model_of(
        MeshSource::generator(Generator::Box, [0.2; 3], [2, 2, 2]),
        solid(),
    )
    .unwrap();
    assert_eq!(from_arrays, generated);
    assert_eq!(from_arrays.tets.len(), 40);
}

#[test]
fn bad_arrays_are_refused_with_the_mesh_messages_naming_the_array() {
    let b = box_tets([1, 1, 1], [0.1; 3], [0.0; 3], CellSplit::Five);
    let case = |tets: Vec<[u32; 4]>, vertices: Vec<[f64; 3]>| {
        model_of(MeshSource::arrays(vertices, tets, vec![], vec![]), solid()).unwrap_err()
    };
    let mut out = b.tets.clone();
    out[2][1] = 8;
    let e = case(out, b.positions.clone());
    assert_eq!(e.field.as_deref(), Some("body[0].mesh.tets"), "{e}");
    assert!(
        e.message
            .contains("index out of range: tet 2 references vertex 8 but there are 8 vertices"),
        "{e}"
    );
    let mut inverted = b.tets.clone();
    inverted[0].swap(2, 3);
    let e = case(inverted, b.positions.clone());
    assert_eq!(e.field.as_deref(), Some("body[0].mesh.tets"), "{e}");
    assert!(e.message.contains("inverted tetrahedron: tet 0"), "{e}");
    let mut flat = b.positions.clone();
    for p in &mut flat {
        p[2] = 0.0;
    }
    let e = case(b.tets.clone(), flat);
    assert!(e.message.contains("degenerate tetrahedron"), "{e}");
    let mut nan = b.positions.clone();
    nan[3][1] = f64::NAN;
    let e = case(b.tets.clone(), nan);
    assert_eq!(e.field.as_deref(), Some("body[0].mesh.vertices"), "{e}");
    assert!(e.message.contains("vertex 3"), "{e}");
    let e = case(vec![], b.positions.clone());
    assert_eq!(e.field.as_deref(), Some("body[0].mesh.tets"), "{e}");
    assert!(e.message.contains("solid body needs tets"), "{e}");
    // The check a binding runs before any GPU work gives the same message.
    let mut out = b.tets.clone();
    out[4][0] = 99;
    let m = MeshSource::arrays(b.positions.clone(), out, vec![], vec![]);
    let e = m.check_arrays("cube").unwrap_err();
    assert_eq!(
        e.to_string(),
        "cube.tets: index out of range: tet 4 references vertex 99 but there are 8 vertices"
    );
}

#[test]
fn cloth_and_rods_from_arrays() {
    let c = cloth_grid([3, 2], [0.3, 0.2], [-0.15, -0.1, 0.0]);
    let mut cloth = Material::new(MaterialModel::Cloth, 1e6, 0.3, 200.0);
    cloth.thickness = Some(1e-3);
    let m = model_of(
        MeshSource::arrays(c.positions.clone(), vec![], c.triangles.clone(), vec![]),
        cloth.clone(),
    )
    .unwrap();
    assert_eq!(m.triangles.len(), c.triangles.len());
    assert!(!m.thin_elements.is_empty());
    let e = model_of(
        MeshSource::arrays(c.positions, vec![], vec![], vec![]),
        cloth,
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("body[0].mesh.triangles"), "{e}");

    let mut rod = Material::new(MaterialModel::Rod, 1e7, 0.3, 1000.0);
    rod.radius = Some(0.005);
    let points: Vec<[f64; 3]> = (0..5).map(|k| [0.05 * k as f64, 0.0, 0.0]).collect();
    let edges = vec![[1, 2], [0, 1], [3, 2], [3, 4]];
    let m = model_of(
        MeshSource::arrays(points.clone(), vec![], vec![], edges),
        rod.clone(),
    )
    .unwrap();
    assert_eq!(m.curve_segments().len(), 4);
    let e = model_of(
        MeshSource::arrays(points, vec![], vec![], vec![[0, 1], [1, 3], [3, 4], [2, 3]]),
        rod,
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("body[0].mesh.edges"), "{e}");
    assert!(e.message.contains("edge 1 [1, 3]"), "{e}");
}

#[test]
fn array_bodies_round_trip_through_toml() {
    let scene = SimulationBuilder::new()
        .body(Body::new("cube", box_arrays(), solid()).translated([0.0, 0.0, 0.3]))
        .ground_plane([0.0, 0.0, 1.0], 0.0)
        .into_scene()
        .unwrap();
    let text = toml::to_string(&scene).unwrap();
    assert!(text.contains("vertices"), "{text}");
    let back = Scene::parse(&text, "round-trip", &[]).unwrap();
    assert_eq!(back, scene);
    assert_eq!(
        SimModel::from_scene(&back).unwrap(),
        SimModel::from_scene(&scene).unwrap()
    );
}
