//! Bilinear subdivision against OpenSubdiv's bilinear goldens, and the
//! generic contract of the scheme traits.

mod common;

use proptest::prelude::*;
use subla_algebra::Par;
use subla_catmark::Bilinear;
use subla_scheme::{Plan, Refiner, eval, testing::check_contract};

#[test]
fn matches_every_bilinear_golden() {
    let mut checked = 0;
    for shape in ["bilinear_cube", "bilinear_nonquads0", "bilinear_nonquads1"] {
        let input = common::read(&common::data().join(format!("meshes/osd/{shape}.obj")));
        for level in 1..=3u32 {
            let golden = common::read(&common::data().join(format!("golden/bilinear/{shape}.L{level}.obj")));
            let plan = Bilinear.build(&input.mesh, level, Par::Rayon).unwrap();
            let pos = eval(&plan, input.positions(), Par::Rayon).unwrap();
            let mesh = plan.refined(level, Par::Rayon).unwrap();
            let c =
                common::compare(mesh, pos.view(), &golden, 1e-6).unwrap_or_else(|e| panic!("{shape} L{level}: {e}"));
            assert!(c.max_rel < 1e-14, "{shape} L{level}: max relative error {}", c.max_rel);
            // f32 within 1e-5.
            let pos32 = eval(&plan, input.positions().mapv(|x| x as f32).view(), Par::Rayon).unwrap();
            let c32 = common::compare(mesh, pos32.mapv(f64::from).view(), &golden, 1e-5)
                .unwrap_or_else(|e| panic!("{shape} L{level} f32: {e}"));
            assert!(c32.max_rel < 1e-6, "{shape} L{level} f32: {}", c32.max_rel);
            checked += 1;
        }
    }
    assert_eq!(checked, 9);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn contract_holds_on_generated_meshes(d in subla_mesh::proptest_support::any_mesh(), levels in 1u32..3) {
        check_contract(&Bilinear, &d.mesh, levels, 1e-12);
    }
}
