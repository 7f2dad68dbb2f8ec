//! Settings of the shortest-path method and their conversion from the scene's `[collision]`
//! table ([`ShortestPathSettings::from_scene`]).

use super::QuerySettings;
use crate::scene::{CollisionSettings, DetectionMode};

/// Parameters of the shortest-path collision handling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShortestPathSettings {
    /// Which collisions are detected.
    pub detection: DetectionMode,
    /// Proximity search distance D of the CCD candidate pairs (m): searches are reused while
    /// every vertex moved less than D/2 since the last one.
    pub ccd_distance: f64,
    /// End each substep with the CCD fail-safe ([`super::CcdStage::failsafe`]): what the response
    /// left colliding goes back to the start of the substep.
    pub ccd_failsafe: bool,
    /// Shortest-path query parameters.
    pub query: QuerySettings,
    /// Target separation of a resolved point from the boundary (m).
    pub offset: f32,
    /// Coulomb friction coefficient of self and inter-body contact.
    pub friction: f32,
    /// Query every tet vertex, not only boundary vertices (recovering deep overlaps, §5.2).
    pub all_vertices: bool,
    /// Also query boundary edges through tets (the paper's edge–tet collisions).
    pub edges: bool,
    /// Largest part of a constraint's violation one projection closes (m; deep penetrations
    /// are resolved over several iterations, which keeps thin elements from inverting).
    pub max_correction: f32,
    /// Over-relaxation ω of the Jacobi average (each vertex moves ω times the mean of its
    /// corrections; 1 = plain average).
    pub relaxation: f32,
    /// Jacobi projections of the collision constraints per response (after each XPBD
    /// iteration); more converge further where many constraints share vertices.
    pub passes: u32,
}

impl Default for ShortestPathSettings {
    fn default() -> Self {
        ShortestPathSettings {
            detection: DetectionMode::default(),
            ccd_distance: 0.01,
            ccd_failsafe: false,
            query: QuerySettings::default(),
            offset: 1e-4,
            friction: 0.0,
            all_vertices: false,
            edges: true,
            relaxation: 1.5,
            max_correction: 2e-3,
            passes: 4,
        }
    }
}

impl ShortestPathSettings {
    /// The method's settings from the scene's `[collision]` table.
    pub fn from_scene(c: &CollisionSettings) -> ShortestPathSettings {
        let mut r = ShortestPathSettings {
            offset: c.contact_offset as f32,
            friction: c.friction as f32,
            all_vertices: c.query_all_vertices,
            edges: c.query_edges,
            relaxation: c.relaxation as f32,
            max_correction: c.max_correction as f32,
            passes: c.response_passes,
            detection: c.detection,
            ccd_distance: c.ccd_distance,
            ccd_failsafe: c.ccd_failsafe,
            ..Default::default()
        };
        r.query.cull = c.infeasible_region_culling;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{CollisionMethod, Scene};

    #[test]
    fn scene_fields_convert() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let s = Scene::parse(
            crate::contact::two_way::settings::tests::CUBE,
            "cube.toml",
            &set(&[
                "collision.method=shortest-path",
                "collision.friction=0.4",
                "collision.max_correction=0.001",
                "collision.query_all_vertices=true",
            ]),
        )
        .unwrap();
        assert_eq!(s.collision.method, CollisionMethod::ShortestPath);
        let r = ShortestPathSettings::from_scene(&s.collision);
        assert_eq!((r.friction, r.max_correction), (0.4, 0.001));
        assert!(r.all_vertices && r.edges && r.query.cull, "defaults");
    }

    #[test]
    fn scene_defaults_are_the_method_defaults() {
        let r = ShortestPathSettings::from_scene(&CollisionSettings::default());
        assert_eq!(r, ShortestPathSettings::default());
    }
}
