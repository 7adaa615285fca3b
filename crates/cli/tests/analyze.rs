//! `subla analyze`: the spectrum per valence, as JSON and as a table, and
//! its refusals.

use std::process::{Command, Output};

fn subla(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_subla")).args(args).output().expect("run subla")
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

#[test]
fn loop_spectra_as_json() {
    let out = ok(&subla(&["analyze", "--scheme", "loop", "--valence", "3..12", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let rows = v["valences"].as_array().expect("valences");
    assert_eq!(rows.len(), 10);
    for r in rows {
        let k = r["valence"].as_u64().unwrap() as f64;
        let l1 = r["eigenvalues"][1]["re"].as_f64().unwrap();
        assert!((l1 - (3.0 / 8.0 + (std::f64::consts::TAU / k).cos() / 4.0)).abs() < 1e-12, "k {k}");
        assert_eq!(r["conditions"]["all"], true);
        let mask: Vec<f64> = r["limit_mask"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert!((mask.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(mask.len(), k as usize + 1);
    }
}

#[test]
fn catmark_table_and_refusals() {
    let out = ok(&subla(&["analyze", "--valence", "4"]));
    assert!(out.contains("| 4 | 9 | 1.000000 [0] | 0.500000 [1] | 0.500000 [3] |"), "{out}");
    assert!(out.contains("all hold"));
    let bilinear = ok(&subla(&["analyze", "--scheme", "bilinear", "--valence", "5"]));
    assert!(bilinear.contains("fails:"), "{bilinear}");
    // √3 over two steps: ⅓ at the regular valence; no characteristic map.
    let sqrt3 = ok(&subla(&["analyze", "--scheme", "sqrt3", "--valence", "6"]));
    assert!(sqrt3.contains("| 6 | 7 | 1.000000 [0] | 0.333333 ["), "{sqrt3}");
    assert!(sqrt3.contains("two steps"), "{sqrt3}");
    assert!(sqrt3.contains("| none |"), "{sqrt3}");
    let o = subla(&["analyze", "--valence", "2..5"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("valences start at 3"));
}

#[test]
fn characteristic_maps_in_the_table_and_as_pictures() {
    let dir = std::env::temp_dir().join(format!("subla-analyze-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = ok(&subla(&["analyze", "--scheme", "loop", "--valence", "3,7", "--png", dir.to_str().unwrap()]));
    assert_eq!(out.matches("regular, injective").count(), 2, "{out}");
    for k in [3, 7] {
        let path = dir.join(format!("loop-k{k}.png"));
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).expect("picture")));
        let reader = decoder.read_info().expect("a PNG");
        let info = reader.info();
        assert_eq!((info.width, info.height), (512, 512));
    }
    let json = ok(&subla(&["analyze", "--valence", "5", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["valences"][0]["characteristic_map"]["injective"], true);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn boundary_vertices() {
    let out = ok(&subla(&["analyze", "--boundary", "--valence", "1..4", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["configuration"], "boundary");
    for r in v["valences"].as_array().unwrap() {
        // The boundary curve's limit mask: 2/3 at the centre.
        assert!((r["limit_mask"][0].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        // A map at 2 and 3 faces; none at 1 and 4 (λ2 = λ3).
        let k = r["valence"].as_u64().unwrap();
        let map = &r["characteristic_map"];
        assert_eq!(map["error"].is_string(), k == 1 || k == 4, "k {k}: {map}");
    }
    let table = ok(&subla(&["analyze", "--boundary", "--valence", "3"]));
    assert!(table.contains("boundary vertex") && table.contains("| 3 | 8 |"), "{table}");
}

#[test]
fn crease_corner_and_dart_configurations() {
    // Catmull-Clark's crease through a vertex of valence 5, 2 sectors on
    // one side: the crease curve's limit mask (1/6, 2/3, 1/6).
    let out = ok(&subla(&["analyze", "--valence", "5", "--crease", "2", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["configuration"], "crease");
    let mask: Vec<f64> =
        v["valences"][0]["limit_mask"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert!(
        (mask[0] - 2.0 / 3.0).abs() < 1e-10
            && (mask[1] - 1.0 / 6.0).abs() < 1e-10
            && (mask[3] - 1.0 / 6.0).abs() < 1e-10
    );
    // The regular crease (across defaults to half the valence): ½ three
    // times, so the gap condition fails (the surface is C0 there).
    let table = ok(&subla(&["analyze", "--scheme", "loop", "--valence", "6", "--crease"]));
    assert!(table.contains("a crease vertex"), "{table}");
    assert!(table.contains("| 6 | 7 | 1.000000 | 0.500000 | 0.500000 | 0.500000 |"), "{table}");
    assert!(table.contains("fails: |λ3| < λ2"), "{table}");
    let corner = ok(&subla(&["analyze", "--valence", "1..3", "--corner", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&corner).expect("json");
    for r in v["valences"].as_array().unwrap() {
        assert!((r["limit_mask"][0].as_f64().unwrap() - 1.0).abs() < 1e-10);
    }
    let dart = ok(&subla(&["analyze", "--valence", "4", "--dart"]));
    assert!(dart.contains("a dart"), "{dart}");
    let o = subla(&["analyze", "--valence", "4", "--crease", "4"]);
    assert!(!o.status.success());
    let o = subla(&["analyze", "--valence", "4", "--crease", "--corner"]);
    assert!(!o.status.success());
}

#[test]
fn solid_edges() {
    let out = ok(&subla(&["analyze", "--valence", "3..5", "--edge", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["configuration"], "edge");
    let rows = v["valences"].as_array().unwrap();
    // k = 3: ½ along the edge leads Catmull-Clark's 0.41; k = 5: 0.55.
    let second: Vec<f64> = rows.iter().map(|r| r["eigenvalues"][1]["re"].as_f64().unwrap()).collect();
    assert!((second[0] - 0.5).abs() < 1e-9 && (second[1] - 0.5).abs() < 1e-9, "{second:?}");
    assert!((second[2] - 0.549_988_354_518_3).abs() < 1e-9, "{second:?}");
    assert_eq!(rows[0]["size"], 21);
    // Frequency 0 at k = 3: under the default layered vertex rule the
    // products of Catmull-Clark's (1, ⅙, 0) with the curve's (1, ½, ¼);
    // under Joy and MacCracken's the solid's own 0.2186.
    let freq0 = |rule: &str| -> Vec<f64> {
        let out = ok(&subla(&["analyze", "--valence", "3", "--edge", "--vertex-rule", rule, "--json"]));
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(v["vertex_rule"], rule);
        let e = v["valences"][0]["eigenvalues"].as_array().unwrap().clone();
        e.iter().filter(|e| e["fourier"] == 0).map(|e| e["re"].as_f64().unwrap()).collect()
    };
    let (lay, jm) = (freq0("layered"), freq0("joy-maccracken"));
    for (got, want) in lay.iter().zip([1.0, 0.5, 0.25, 1.0 / 6.0, 1.0 / 12.0, 1.0 / 24.0]) {
        assert!((got - want).abs() < 1e-9, "{lay:?}");
    }
    assert!((jm[2] - 0.2186).abs() < 1e-4, "{jm:?}");
    let o = subla(&["analyze", "--scheme", "loop", "--valence", "4", "--edge"]);
    assert!(!o.status.success());
}

#[test]
fn boundary_characteristic_maps() {
    let out = ok(&subla(&["analyze", "--valence", "1..6", "--boundary"]));
    // Regular boundary (2 faces) and 3 faces: regular and injective; 5 and
    // 6 faces fold; 1 and 4 faces have no unique map.
    assert!(out.contains("| 2 | 6 | 1.000000 | 0.500000 | 0.500000 |"), "{out}");
    assert_eq!(out.matches("regular, injective").count(), 2, "{out}");
    assert_eq!(out.matches("not regular").count(), 2, "{out}");
}
