//! Input that is not what it claims: endless or binary streams, FIFOs,
//! bodies that disagree with their header's counts, values the file writes
//! but `f64` cannot hold; and what each writer can carry (channels, names,
//! groups) and says it cannot.

use std::io::Read;
use std::path::{Path, PathBuf};

use ndarray::Array2;
use subla_mesh::obj::{parse_obj, read_obj, read_obj_from, write_obj};
use subla_mesh::ply::{PlyEncoding, parse_ply, read_ply, read_ply_from, write_ply};
use subla_mesh::{Dropped, FileFormat, Group, GroupKind, Location, Mesh, MeshData, MeshError, Validation};

/// An endless stream of `byte(k)`, counting what was read.
struct Endless<F: FnMut(u64) -> u8> {
    byte: F,
    read: u64,
}

impl<F: FnMut(u64) -> u8> Read for Endless<F> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        for b in buf.iter_mut() {
            *b = (self.byte)(self.read);
            self.read += 1;
        }
        Ok(buf.len())
    }
}

/// At most this many bytes of an endless stream may be read.
const LIMIT: u64 = 64 << 20;

fn zeros() -> Endless<impl FnMut(u64) -> u8> {
    Endless { byte: |_| 0, read: 0 }
}

/// Pseudo-random bytes (a fixed LCG: the same every run).
fn noise() -> Endless<impl FnMut(u64) -> u8> {
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    Endless {
        byte: move |_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        },
        read: 0,
    }
}

/// `prefix`, then `byte` forever.
fn after(prefix: &'static [u8], byte: u8) -> Endless<impl FnMut(u64) -> u8> {
    Endless { byte: move |k| prefix.get(k as usize).copied().unwrap_or(byte), read: 0 }
}

fn cube() -> MeshData {
    let faces = [[0, 1, 3, 2], [2, 3, 5, 4], [4, 5, 7, 6], [6, 7, 1, 0], [1, 7, 5, 3], [6, 0, 2, 4]];
    let mesh = Mesh::from_faces(8, &faces).unwrap();
    MeshData::new(mesh, Array2::from_shape_fn((8, 3), |(v, c)| ((v >> c) & 1) as f64 - 0.5)).unwrap()
}

fn obj_text(d: &MeshData) -> String {
    let mut out = Vec::new();
    write_obj(d, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn ply_bytes(d: &MeshData, enc: PlyEncoding) -> Vec<u8> {
    let mut out = Vec::new();
    write_ply(d, &mut out, enc).unwrap();
    out
}

// ---------------------------------------------------------------------------
// Endless and binary streams: refused at the first bad byte or line
// ---------------------------------------------------------------------------

#[test]
fn obj_reading_stops_at_the_first_nul_byte_of_an_endless_stream() {
    let mut z = zeros();
    let err = read_obj_from(&mut z, Validation::OpenSubdiv, "zeros").unwrap_err();
    assert!(matches!(&err, MeshError::NotText { at, .. } if *at == Location::line(1)), "{err:?}");
    assert!(z.read <= 1 << 16, "read {} bytes", z.read);
    let mut z = after(b"v 0 0 0\nv 1 0 0\n", 0);
    let err = read_obj_from(&mut z, Validation::OpenSubdiv, "zeros").unwrap_err();
    assert!(matches!(&err, MeshError::NotText { at, .. } if *at == Location::line(3)), "{err:?}");
    // The device itself: no longer read to the end of memory.
    let err = read_obj("/dev/zero", Validation::OpenSubdiv).unwrap_err();
    assert!(matches!(err, MeshError::NotText { .. }), "{err:?}");
}

#[test]
fn obj_reading_stops_early_on_endless_noise_and_endless_lines() {
    let mut n = noise();
    let err = read_obj_from(&mut n, Validation::OpenSubdiv, "noise").unwrap_err();
    assert!(matches!(err, MeshError::NotText { .. } | MeshError::MalformedNumber { .. }), "{err:?}");
    assert!(n.read <= LIMIT, "read {} bytes", n.read);
    // One endless line without a NUL byte: a keyword that never ends, a
    // statement that is not OBJ, spaces.
    for (prefix, byte) in [(&b""[..], b'a'), (b"v 1 2 3\n=", b'x'), (b"", b' ')] {
        let mut s = after(prefix, byte);
        let err = read_obj_from(&mut s, Validation::OpenSubdiv, "line").unwrap_err();
        assert!(matches!(err, MeshError::NotText { .. }), "{err:?}");
        assert!(s.read <= LIMIT, "read {} bytes", s.read);
    }
}

#[test]
fn ply_reading_stops_at_the_first_bad_byte_of_an_endless_stream() {
    for mut s in [after(b"", 0), after(b"ply\n", 0)] {
        let err = read_ply_from(&mut s, Validation::OpenSubdiv, "zeros").unwrap_err();
        assert!(matches!(err, MeshError::NotText { .. }), "{err:?}");
        assert!(s.read <= 1 << 20, "read {} bytes", s.read);
    }
    let mut n = noise();
    let err = read_ply_from(&mut n, Validation::OpenSubdiv, "noise").unwrap_err();
    assert!(matches!(err, MeshError::NotText { .. } | MeshError::MalformedStatement { .. }), "{err:?}");
    assert!(n.read <= 1 << 20, "read {} bytes", n.read);
    let err = read_ply("/dev/zero", Validation::OpenSubdiv).unwrap_err();
    assert!(matches!(err, MeshError::NotText { .. }), "{err:?}");
    // A valid header, then noise or an endless token.
    const HEADER: &[u8] = b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n\
        property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
    let mut s = Endless {
        byte: {
            let mut n = noise();
            move |k| HEADER.get(k as usize).copied().unwrap_or_else(|| (n.byte)(k))
        },
        read: 0,
    };
    let err = read_ply_from(&mut s, Validation::OpenSubdiv, "noise").unwrap_err();
    assert!(
        matches!(
            err,
            MeshError::NotText { .. } | MeshError::MalformedNumber { .. } | MeshError::MalformedStatement { .. }
        ),
        "{err:?}"
    );
    assert!(s.read <= 1 << 20, "read {} bytes", s.read);
    let mut s = after(HEADER, b'7');
    let err = read_ply_from(&mut s, Validation::OpenSubdiv, "digits").unwrap_err();
    assert!(matches!(&err, MeshError::NotText { at, .. } if *at == Location::line(10)), "{err:?}");
    assert!(s.read <= LIMIT, "read {} bytes", s.read);
    // A binary body of endless list items is read to no end of memory
    // either: its indices are checked as they come.
    let header: &'static [u8] = b"ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n\
        property float y\nproperty float z\nelement face 1\nproperty list uint uint vertex_indices\nend_header\n\
        \0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\xff\xff\xff\xff";
    let mut s = after(header, 0x10);
    let err = read_ply_from(&mut s, Validation::OpenSubdiv, "items").unwrap_err();
    assert!(matches!(err, MeshError::IndexOutOfRange { .. }), "{err:?}");
    assert!(s.read <= 1 << 20, "read {} bytes", s.read);
}

/// A FIFO in a fresh folder, fed `bytes` by a thread.
fn fifo(name: &str, bytes: Vec<u8>) -> (PathBuf, std::thread::JoinHandle<()>) {
    let dir = std::env::temp_dir().join(format!("subla-fifo-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let ok = std::process::Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(ok.success());
    let p = path.clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.write_all(&bytes).unwrap();
    });
    (path, writer)
}

#[test]
fn a_fifo_carrying_a_valid_mesh_is_read() {
    let d = cube();
    let (path, w) = fifo("cube.obj", obj_text(&d).into_bytes());
    let got = read_obj(&path, Validation::OpenSubdiv).unwrap();
    w.join().unwrap();
    assert_eq!(got.vertices, d.vertices);
    assert_eq!(got.mesh.topology(), d.mesh.topology());
    for enc in [PlyEncoding::Ascii, PlyEncoding::BinaryLittleEndian] {
        let (path, w) = fifo("cube.ply", ply_bytes(&d, enc));
        let got = read_ply(&path, Validation::OpenSubdiv).unwrap();
        w.join().unwrap();
        assert_eq!(got.vertices, d.vertices);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}

#[test]
fn big_files_read_from_a_stream_equal_the_in_memory_parse() {
    // Many blocks, a group per face, relative indices and continuations
    // across block ends.
    let mut text = String::new();
    for k in 0..400_000 {
        text.push_str(&format!("v {k} 0.5 -1\\\n 7\n"));
        if k >= 2 {
            text.push_str(&format!("g part{k}\nf -3 -2 \\\n -1\n"));
        }
    }
    let from_memory = parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap();
    let from_stream = read_obj_from(text.as_bytes(), Validation::OpenSubdiv, "OBJ input").unwrap();
    assert_eq!(from_memory, from_stream);
    assert_eq!(from_stream.vertices.ncols(), 4);
    assert_eq!(from_stream.groups.len(), 399_998);
}

// ---------------------------------------------------------------------------
// Header counts against the body
// ---------------------------------------------------------------------------

#[test]
fn ascii_ply_with_more_face_lines_than_announced_is_refused() {
    let text = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n\
        element face 1\nproperty list uchar int vertex_indices\nend_header\n\
        0 0 0\n1 0 0\n0 1 0\n1 1 0\n3 0 1 2\n3 1 3 2\n";
    let err = parse_ply(text.as_bytes(), Validation::OpenSubdiv).unwrap_err();
    assert!(matches!(&err, MeshError::MoreThanDeclared { at, .. } if *at == Location::line(15)), "{err:?}");
    assert!(err.to_string().contains("1 face"), "{err}");
    // Blank lines after the data are fine.
    let ok = text.replace("3 1 3 2\n", "\n  \n");
    assert_eq!(parse_ply(ok.as_bytes(), Validation::OpenSubdiv).unwrap().mesh.num_faces(), 1);
    // Fewer lines than announced: the error says what was expected.
    let short = text.replace("element face 1", "element face 3");
    let err = parse_ply(short.as_bytes(), Validation::OpenSubdiv).unwrap_err();
    assert!(
        matches!(&err, MeshError::Truncated { expected, found, .. } if expected == "3 faces" && found == "2 faces")
    );
}

#[test]
fn binary_ply_with_data_after_the_announced_elements_is_refused() {
    let d = cube();
    let mut bytes = ply_bytes(&d, PlyEncoding::BinaryLittleEndian);
    let end = bytes.len() as u64;
    // A trailing line end (some writers add one) is fine.
    bytes.extend_from_slice(b"\r\n");
    assert!(parse_ply(&bytes, Validation::OpenSubdiv).is_ok());
    bytes.extend_from_slice(&[4, 0, 0, 0, 0]);
    let err = parse_ply(&bytes, Validation::OpenSubdiv).unwrap_err();
    let at = Location { line: None, offset: Some(end + 2) };
    assert!(matches!(&err, MeshError::MoreThanDeclared { at: a, .. } if *a == at), "{err:?}");
}

#[test]
fn obj_written_by_subla_and_cut_short_is_reported_truncated() {
    let text = obj_text(&cube());
    assert!(text.starts_with("# written by subla: 8 vertices, 6 faces\n"), "{text}");
    // An interrupted write: the last faces are missing.
    let cut: String = text.lines().take(8 + 1 + 4).map(|l| format!("{l}\n")).collect();
    let err = parse_obj(cut.as_bytes(), Validation::OpenSubdiv).unwrap_err();
    assert!(
        matches!(&err, MeshError::Truncated { expected, found, .. }
            if expected.starts_with("8 vertices and 6 faces") && found.starts_with("8 vertices and 4 faces")),
        "{err:?}"
    );
    assert!(err.to_string().contains("cut short"), "{err}");
    // Cut among the vertices too.
    let cut: String = text.lines().take(5).map(|l| format!("{l}\n")).collect::<String>() + "f 1 2 3\n";
    assert!(matches!(parse_obj(cut.as_bytes(), Validation::OpenSubdiv), Err(MeshError::Truncated { .. })));
    // More than the comment says: the comment no longer describes the file.
    let more = format!("{text}f 1 2 3\n");
    let err = parse_obj(more.as_bytes(), Validation::OpenSubdiv).unwrap_err();
    assert!(matches!(&err, MeshError::MoreThanDeclared { at, .. } if *at == Location::line(1)), "{err:?}");
    // The same counts anywhere but on line 1 are an ordinary comment.
    let moved = format!("\n{}f 1 2 3\n", text);
    assert!(parse_obj(moved.as_bytes(), Validation::OpenSubdiv).is_ok());
}

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

#[test]
fn overflowing_coordinate_error_quotes_the_file() {
    let err = parse_obj(b"v 0 0 0\nv 1e999 0 0\nv 0 1 0\nf 1 2 3\n", Validation::OpenSubdiv).unwrap_err();
    assert!(
        matches!(&err, MeshError::NonFiniteCoordinate { vertex: 1, channel: 0, written: Some(w), .. } if w == "1e999"),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("1e999") && msg.contains("too large"), "{msg}");
    let ply = "ply\nformat ascii 1.0\nelement vertex 3\nproperty double x\nproperty double y\nproperty double z\n\
        element face 1\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 -2e400 0\n0 1 0\n3 0 1 2\n";
    let err = parse_ply(ply.as_bytes(), Validation::OpenSubdiv).unwrap_err();
    assert!(err.to_string().contains("\"-2e400\""), "{err}");
}

#[test]
fn a_mesh_whose_faces_are_all_holes_says_so() {
    let d = parse_obj(b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nt hole 1/0/0 0\n", Validation::OpenSubdiv).unwrap();
    let err = d.mesh.check_not_all_holes("tri.obj").unwrap_err();
    assert!(matches!(&err, MeshError::AllHoles { faces: 1, .. }), "{err:?}");
    assert!(err.to_string().contains("holes") && !err.to_string().contains("empty"), "{err}");
    assert!(cube().mesh.check_not_all_holes("cube").is_ok());
}

#[test]
fn control_characters_in_file_names_are_escaped_in_messages() {
    let err = read_obj(Path::new("no\u{1b}[31mfile\n.obj"), Validation::OpenSubdiv).unwrap_err();
    let msg = err.to_string();
    assert!(!msg.chars().any(char::is_control), "{msg:?}");
    assert!(msg.contains("\\u{1b}"), "{msg:?}");
}

#[test]
fn long_tag_names_are_shortened_in_messages() {
    let name = "x".repeat(100_000);
    let text = format!("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nt {name} 1/0/0\n");
    let err = parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap_err();
    assert!(err.to_string().len() < 300, "{} bytes", err.to_string().len());
}

// ---------------------------------------------------------------------------
// Channels, names and groups through the writers
// ---------------------------------------------------------------------------

#[test]
fn obj_colour_channels_are_named_and_round_trip_with_groups() {
    let text = "v 0 0 0 1 0 0\nv 1 0 0 0 1 0\nv 0 1 0 0 0 1\nv 1 1 0 0.5 0.5 0.5\n\
        o thing\ng left\nf 1 2 3\ng right\nf 2 4 3\n";
    let d = parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap();
    assert_eq!(d.channels, ["x", "y", "z", "red", "green", "blue"]);
    assert_eq!(d.vertices.ncols(), 6);
    let again = parse_obj(obj_text(&d).as_bytes(), Validation::OpenSubdiv).unwrap();
    assert_eq!(again, d);
    assert_eq!(
        again.groups,
        [
            Group { kind: GroupKind::Object, name: "thing".into(), faces: 0..2 },
            Group { kind: GroupKind::Group, name: "left".into(), faces: 0..1 },
            Group { kind: GroupKind::Group, name: "right".into(), faces: 1..2 },
        ]
    );
    assert!(d.dropped_by(FileFormat::Obj).is_empty());
    assert_eq!(d.dropped_by(FileFormat::Ply), [Dropped::Groups(3)]);
    // Homogeneous `w`.
    let d = parse_obj(b"v 0 0 0 1\nv 1 0 0 2\nv 0 1 0 1\nf 1 2 3\n", Validation::OpenSubdiv).unwrap();
    assert_eq!(d.channels, ["x", "y", "z", "w"]);
}

#[test]
fn every_ply_vertex_property_is_a_channel_and_round_trips_by_name() {
    let text = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty uchar red\n\
        property float y\nproperty float z\nproperty uchar green\nproperty uchar blue\nproperty float quality\n\
        element face 1\nproperty list uchar int vertex_indices\nend_header\n\
        0 255 0 0 0 0 0.5\n1 0 0 0 255 0 1\n0 0 1 0 0 255 2\n3 0 1 2\n";
    let d = parse_ply(text.as_bytes(), Validation::OpenSubdiv).unwrap();
    assert_eq!(d.channels, ["x", "y", "z", "red", "green", "blue", "quality"]);
    assert_eq!(d.vertices.row(0).to_vec(), [0.0, 0.0, 0.0, 255.0, 0.0, 0.0, 0.5]);
    for enc in [PlyEncoding::Ascii, PlyEncoding::BinaryLittleEndian] {
        let again = parse_ply(&ply_bytes(&d, enc), Validation::OpenSubdiv).unwrap();
        assert_eq!(again, d);
    }
    assert!(d.dropped_by(FileFormat::Ply).is_empty());
    // OBJ keeps the values but not the names.
    let obj = parse_obj(obj_text(&d).as_bytes(), Validation::OpenSubdiv).unwrap();
    assert_eq!(obj.vertices, d.vertices);
    let dropped = d.dropped_by(FileFormat::Obj);
    assert!(
        matches!(&dropped[..], [Dropped::ChannelNames(names)]
            if names.len() == 4 && names[0] == (3, "red".to_string(), "w".to_string())),
        "{dropped:?}"
    );
    assert!(dropped[0].to_string().contains("\"red\" becomes \"w\""), "{}", dropped[0]);
}

#[test]
fn ply_names_what_it_cannot_carry() {
    let text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nvt 0 0\nvn 0 0 1\ng a\nf 1/1/1 2/1/1 3/1/1\nf 2/1/1 4/1/1 3/1/1\n\
        t crease 2/1/0 1 2 3\nt corner 1/1/0 0 2\nt hole 1/0/0 1\nt interpolateboundary 1/0/0 1\n";
    let d = parse_obj(text.as_bytes(), Validation::OpenSubdiv).unwrap();
    let dropped = d.dropped_by(FileFormat::Ply);
    // Texture coordinates are carried (a `texcoord` list per face).
    assert_eq!(
        dropped,
        [
            Dropped::Groups(1),
            Dropped::Normals,
            Dropped::Creases(1),
            Dropped::Corners(1),
            Dropped::Holes(1),
            Dropped::Options
        ]
    );
    assert!(d.dropped_by(FileFormat::Obj).is_empty());
}

#[test]
fn long_names_and_keywords_in_a_ply_header_are_shortened_in_messages() {
    let long = "q".repeat(500_000);
    for header in [
        format!("ply\nformat ascii 1.0\nelement vertex 1\nproperty {long} x\nend_header\n"),
        format!("ply\nformat {long} 1.0\nend_header\n"),
        format!(
            "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nproperty float {long}\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n"
        ),
    ] {
        let err = parse_ply(header.as_bytes(), Validation::OpenSubdiv).unwrap_err();
        assert!(err.to_string().len() < 300, "{} bytes: {:?}", err.to_string().len(), &err.to_string()[..100]);
    }
}
