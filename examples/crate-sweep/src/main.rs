//! A sweep of the most-downloaded crates on crates.io, each used the ordinary
//! way, unmodified, with a small deterministic check: one line per crate,
//! `<crate>: ok <value>`. The same source runs on the host (`cargo run`) and
//! on the GPU (`gpurun run examples/crate-sweep`); the output is compared with
//! `expected-output.txt`.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};

fn main() {
    // log first: its logger prints the `log:` line when the record arrives.
    check_log();

    let checks: &[(&str, fn() -> String)] = &[
        ("anyhow", anyhow_check),
        ("thiserror", thiserror_check),
        ("itertools", itertools_check),
        ("either", either_check),
        ("smallvec", smallvec_check),
        ("arrayvec", arrayvec_check),
        ("hashbrown", hashbrown_check),
        ("indexmap", indexmap_check),
        ("once_cell", once_cell_check),
        ("lazy_static", lazy_static_check),
        ("bitflags", bitflags_check),
        ("memchr", memchr_check),
        ("aho-corasick", aho_corasick_check),
        ("base64", base64_check),
        ("hex", hex_check),
        ("sha2", sha2_check),
        ("md-5", md5_check),
        ("crc32fast", crc32fast_check),
        ("byteorder", byteorder_check),
        ("bytes", bytes_check),
        ("num-traits", num_traits_check),
        ("num-integer", num_integer_check),
        ("semver", semver_check),
        ("strsim", strsim_check),
        ("unicode-segmentation", unicode_segmentation_check),
        ("unicode-width", unicode_width_check),
        ("textwrap", textwrap_check),
        ("fnv", fnv_check),
        ("ahash", ahash_check),
        ("humantime", humantime_check),
        ("chrono", chrono_check),
        ("time", time_check),
        ("serde", serde_check),
        ("toml", toml_check),
        ("csv", csv_check),
        ("flate2", flate2_check),
        ("url", url_check),
        ("rand", rand_check),
        ("rand_chacha", rand_chacha_check),
    ];
    for (name, check) in checks {
        println!("{name}: ok {}", check());
    }
    os_randomness_checks();
    println!("crate-sweep: {} crates checked", checks.len() + 1);
}

// --- error handling -------------------------------------------------------

fn anyhow_check() -> String {
    use anyhow::Context;
    fn parse(s: &str) -> anyhow::Result<u32> {
        let n: u32 = s.parse().with_context(|| format!("parsing {s:?}"))?;
        anyhow::ensure!(n < 100, "{n} is too large");
        Ok(n)
    }
    let good = parse("42").expect("42 parses");
    let bad = parse("x42").expect_err("x42 does not parse");
    let big = parse("420").expect_err("420 is too large");
    format!("{good}; {bad:#}; {big}")
}

#[derive(Debug, thiserror::Error)]
enum LaunchError {
    #[error("warp {warp} out of range (max {max})")]
    WarpOutOfRange { warp: u32, max: u32 },
    #[error("bad argument")]
    Parse(#[from] std::num::ParseIntError),
}

fn thiserror_check() -> String {
    fn launch(arg: &str) -> Result<u32, LaunchError> {
        let warp: u32 = arg.parse()?;
        if warp >= 4224 {
            return Err(LaunchError::WarpOutOfRange { warp, max: 4223 });
        }
        Ok(warp)
    }
    let out_of_range = launch("5000").unwrap_err();
    let parse = launch("five").unwrap_err();
    let source = std::error::Error::source(&parse).map(|e| e.to_string()).unwrap_or_default();
    format!("{out_of_range}; {parse} (source: {source}); {}", launch("7").unwrap())
}

// --- iterators and containers ---------------------------------------------

fn itertools_check() -> String {
    use itertools::Itertools;
    let sorted = [5, 3, 9, 1].iter().sorted().join(",");
    let pairs = (1..=2).cartesian_product(['a', 'b']).map(|(n, c)| format!("{n}{c}")).join(" ");
    let groups = "aaabccdd".chars().chunk_by(|c| *c).into_iter().map(|(c, g)| format!("{c}{}", g.count())).join("");
    let (min, max) = [4, -2, 7, 0].iter().minmax().into_option().unwrap();
    format!("sorted={sorted} product=[{pairs}] runs={groups} minmax=({min},{max})")
}

fn either_check() -> String {
    use either::Either;
    let items: Vec<Either<i32, &str>> =
        ["1", "two", "3", "four"].iter().map(|s| s.parse::<i32>().map_or(Either::Right(*s), Either::Left)).collect();
    let numbers: i32 = items.iter().filter_map(|e| e.left()).sum();
    let words: Vec<&str> = items.iter().filter_map(|e| e.right()).collect();
    let lens: Vec<usize> = items.iter().map(|e| either::for_both!(e, v => v.to_string().len())).collect();
    format!("left sum={numbers} right={words:?} lens={lens:?}")
}

fn smallvec_check() -> String {
    let mut v: smallvec::SmallVec<[u32; 4]> = smallvec::smallvec![1, 2, 3];
    let inline_before = !v.spilled();
    v.extend([4, 5, 6]);
    format!("{:?} inline-before={inline_before} spilled-after={}", v.as_slice(), v.spilled())
}

fn arrayvec_check() -> String {
    let mut v = arrayvec::ArrayVec::<u8, 3>::new();
    let pushed: Vec<bool> = (10..14).map(|x| v.try_push(x).is_ok()).collect();
    let mut s = arrayvec::ArrayString::<8>::new();
    s.push_str("gpu");
    let too_long = s.try_push_str("-threads").is_err();
    format!("{:?} pushed={pushed:?} string={s:?} overflow-refused={too_long}", v.as_slice())
}

fn hashbrown_check() -> String {
    let mut counts = hashbrown::HashMap::new();
    for w in "the quick brown fox jumps over the lazy dog the end".split(' ') {
        *counts.entry(w).or_insert(0u32) += 1;
    }
    let sorted: BTreeMap<_, _> = counts.iter().map(|(k, v)| (*k, *v)).collect();
    let set: hashbrown::HashSet<u32> = (0..1000).map(|i| i % 37).collect();
    format!("{} distinct words, the={} fox={} set-len={}", sorted.len(), sorted["the"], sorted["fox"], set.len())
}

fn indexmap_check() -> String {
    let mut m = indexmap::IndexMap::new();
    for (k, v) in [("zeta", 1), ("alpha", 2), ("mid", 3), ("alpha", 20)] {
        m.insert(k, v);
    }
    m.shift_remove("zeta");
    m.insert("omega", 4);
    let order: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("insertion order kept: {} index(mid)={:?}", order.join(","), m.get_index_of("mid"))
}

// --- lazy statics ------------------------------------------------------------

fn once_cell_check() -> String {
    static SQUARES: once_cell::sync::Lazy<Vec<u64>> = once_cell::sync::Lazy::new(|| (0..10).map(|i| i * i).collect());
    static NAME: once_cell::sync::OnceCell<String> = once_cell::sync::OnceCell::new();
    let first = NAME.set("first".to_string()).is_ok();
    let second = NAME.set("second".to_string()).is_ok();
    let handles: Vec<_> = (0..4).map(|_| std::thread::spawn(|| SQUARES.iter().sum::<u64>())).collect();
    let sums: Vec<u64> = handles.into_iter().map(|h| h.join().expect("a thread")).collect();
    format!("lazy sums from 4 threads={sums:?} set(first)={first} set(second)={second} value={}", NAME.get().unwrap())
}

lazy_static::lazy_static! {
    static ref PRIMES: Vec<u32> = (2..60u32).filter(|n| (2..*n).all(|d| n % d != 0)).collect();
    static ref ROMAN: BTreeMap<char, u32> = [('I', 1), ('V', 5), ('X', 10), ('L', 50), ('C', 100)].into_iter().collect();
}

fn lazy_static_check() -> String {
    let roman: u32 = "CLXVI".chars().map(|c| ROMAN[&c]).sum();
    format!("{} primes below 60, last {}; CLXVI={roman}", PRIMES.len(), PRIMES.last().unwrap())
}

bitflags::bitflags! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Access: u8 {
        const READ = 0b001;
        const WRITE = 0b010;
        const EXEC = 0b100;
    }
}

fn bitflags_check() -> String {
    let rw = Access::READ | Access::WRITE;
    let all = Access::all();
    format!(
        "{rw:?} bits={:#05b} contains(WRITE)={} all-minus-rw={:?}",
        rw.bits(),
        rw.contains(Access::WRITE),
        all - rw
    )
}

// --- log ---------------------------------------------------------------------

struct PrintLogger;

impl log::Log for PrintLogger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Info
    }
    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            println!("log: ok [{}] {}: {}", record.level(), record.target(), record.args());
        }
    }
    fn flush(&self) {}
}

static LOGGER: PrintLogger = PrintLogger;

fn check_log() {
    log::set_logger(&LOGGER).expect("the first logger");
    log::set_max_level(log::LevelFilter::Info);
    log::debug!("filtered out");
    log::info!("{} lanes per warp (debug records filtered: {})", 32, !log::log_enabled!(log::Level::Debug));
}

// --- text search -------------------------------------------------------------

fn memchr_check() -> String {
    let hay = b"warp lanes run warp-synchronous code; a warp has 32 lanes";
    let first_w = memchr::memchr(b'w', hay);
    let last_w = memchr::memrchr(b'w', hay);
    let warps = memchr::memmem::find_iter(hay, b"warp").count();
    let any = memchr::memchr3(b'3', b'2', b';', hay);
    format!("memchr(w)={first_w:?} memrchr(w)={last_w:?} memmem(warp)x{warps} memchr3={any:?}")
}

fn aho_corasick_check() -> String {
    let patterns = ["apple", "maple", "snapple"];
    let ac = aho_corasick::AhoCorasick::new(patterns).expect("patterns build");
    let hay = "Nobody likes maple in their apple flavored Snapple.";
    let found: Vec<String> = ac.find_iter(hay).map(|m| format!("{}@{}", patterns[m.pattern().as_usize()], m.start())).collect();
    let replaced = ac.replace_all(hay, &["fruit", "syrup", "drink"]);
    format!("{found:?} -> {replaced:?}")
}

// --- encodings and checksums -------------------------------------------------

fn base64_check() -> String {
    use base64::Engine;
    let engine = base64::engine::general_purpose::STANDARD;
    let encoded = engine.encode(b"GPU std threads");
    let decoded = engine.decode(&encoded).expect("valid base64");
    let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([0xfb, 0xff, 0xfe]);
    format!("{encoded} round-trip={} url-safe={url_safe}", decoded == b"GPU std threads")
}

fn hex_check() -> String {
    let encoded = hex::encode([0xde, 0xad, 0xbe, 0xef, 0x00, 0x2a]);
    let decoded = hex::decode("cafe0042").expect("valid hex");
    let bad = hex::decode("xyz").unwrap_err();
    format!("{encoded} {decoded:?} error={bad}")
}

fn sha2_check() -> String {
    use sha2::Digest;
    let abc = sha2::Sha256::digest(b"abc");
    let mut hasher = sha2::Sha512::new();
    for chunk in [&b"a"[..], b"b", b"c"] {
        hasher.update(chunk);
    }
    let sha512 = hex::encode(hasher.finalize());
    format!("sha256(abc)={} sha512(abc)={}..", hex::encode(abc), &sha512[..32])
}

fn md5_check() -> String {
    use md5::Digest;
    format!("md5(abc)={} md5()={}", hex::encode(md5::Md5::digest(b"abc")), hex::encode(md5::Md5::digest(b"")))
}

fn crc32fast_check() -> String {
    let check = crc32fast::hash(b"123456789");
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(b"1234");
    hasher.update(b"56789");
    format!("crc32(123456789)={check:08x} incremental={:08x}", hasher.finalize())
}

// --- bytes and numbers -------------------------------------------------------

fn byteorder_check() -> String {
    use byteorder::{BigEndian, LittleEndian, ReadBytesExt, WriteBytesExt};
    let mut buf = Vec::new();
    buf.write_u32::<BigEndian>(0x0102_0304).unwrap();
    buf.write_u16::<LittleEndian>(0xabcd).unwrap();
    buf.write_f64::<BigEndian>(1.5).unwrap();
    let mut rd = std::io::Cursor::new(&buf);
    let a = rd.read_u32::<BigEndian>().unwrap();
    let b = rd.read_u16::<LittleEndian>().unwrap();
    let c = rd.read_f64::<BigEndian>().unwrap();
    format!("bytes={} read back {a:#x} {b:#x} {c}", hex::encode(&buf))
}

fn bytes_check() -> String {
    use bytes::{Buf, BufMut};
    let mut buf = bytes::BytesMut::with_capacity(16);
    buf.put_u16(0xbeef);
    buf.put_slice(b"payload");
    buf.put_u8(b'!');
    let mut frozen = buf.freeze();
    let header = frozen.get_u16();
    let body = frozen.split_to(7);
    let shared = body.clone();
    format!("header={header:#x} body={body:?} rest={frozen:?} clones-equal={}", shared == body)
}

fn num_traits_check() -> String {
    use num_traits::{CheckedMul, Float, One, PrimInt, Zero};
    fn product<T: PrimInt + CheckedMul>(xs: &[T]) -> Option<T> {
        xs.iter().try_fold(T::one(), |acc, x| acc.checked_mul(x))
    }
    fn hypot<T: Float>(a: T, b: T) -> T {
        (a * a + b * b).sqrt()
    }
    format!(
        "product(u8)={:?} product(u64)={:?} popcount(0xf0f0u16)={} hypot(3,4)={} zero={} one={}",
        product::<u8>(&[2, 3, 50]),
        product::<u64>(&[2, 3, 50]),
        0xf0f0u16.count_ones(),
        hypot(3.0f64, 4.0),
        i32::zero(),
        f32::one()
    )
}

fn num_integer_check() -> String {
    use num_integer::Integer;
    format!(
        "gcd(84,36)={} lcm(4,6)={} div_floor(-7,2)={} mod_floor(-7,2)={} sqrt(1000)={} binomial(10,3)={}",
        num_integer::gcd(84, 36),
        num_integer::lcm(4, 6),
        Integer::div_floor(&-7i32, &2),
        Integer::mod_floor(&-7i32, &2),
        num_integer::sqrt(1000u32),
        num_integer::binomial(10u64, 3)
    )
}

// --- text --------------------------------------------------------------------

fn semver_check() -> String {
    let req = semver::VersionReq::parse(">=1.2.3, <2").expect("a requirement");
    let mut versions: Vec<semver::Version> =
        ["1.10.0", "1.2.3-alpha.1", "2.0.0", "1.2.3", "1.9.9+build.5"].iter().map(|v| v.parse().unwrap()).collect();
    versions.sort();
    let sorted: Vec<String> = versions.iter().map(ToString::to_string).collect();
    let matching: Vec<String> = versions.iter().filter(|v| req.matches(v)).map(ToString::to_string).collect();
    format!("sorted={sorted:?} matching {req}: {matching:?}")
}

fn strsim_check() -> String {
    format!(
        "levenshtein(kitten,sitting)={} damerau(ca,abc)={} jaro_winkler(martha,marhta)={:.4} hamming={:?}",
        strsim::levenshtein("kitten", "sitting"),
        strsim::damerau_levenshtein("ca", "abc"),
        strsim::jaro_winkler("martha", "marhta"),
        strsim::hamming("karolin", "kathrin")
    )
}

fn unicode_segmentation_check() -> String {
    use unicode_segmentation::UnicodeSegmentation;
    let text = "e\u{301}te\u{301} 👨‍👩‍👧 on the GPU, ok?";
    let graphemes = text.graphemes(true).count();
    let words: Vec<&str> = text.unicode_words().collect();
    format!("{} chars, {graphemes} graphemes, words={words:?}", text.chars().count())
}

fn unicode_width_check() -> String {
    use unicode_width::UnicodeWidthStr;
    let samples = ["ab", "你好", "ｗｉｄｅ", "e\u{301}", "🦀"];
    let widths: Vec<String> = samples.iter().map(|s| format!("{s}={}", s.width())).collect();
    widths.join(" ")
}

fn textwrap_check() -> String {
    let text = "A Rust program written against std runs unchanged on the GPU: each thread is one warp.";
    let lines = textwrap::wrap(text, 24);
    let indented = textwrap::indent("a\nb\n", "> ");
    format!("{} lines: {:?} indent={indented:?}", lines.len(), lines)
}

// --- hashing -----------------------------------------------------------------

fn fnv_check() -> String {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(b"hello");
    let mut map: fnv::FnvHashMap<&str, u32> = fnv::FnvHashMap::default();
    map.insert("warp", 32);
    map.insert("wave", 64);
    format!("fnv1a64(hello)={:016x} map[wave]={}", h.finish(), map["wave"])
}

fn ahash_check() -> String {
    // Fixed seeds here (the random ones are in os_randomness_checks).
    let state = ahash::RandomState::with_seeds(1, 2, 3, 4);
    let same = state.hash_one("lane") == state.hash_one("lane");
    let differ = state.hash_one("lane") != state.hash_one("warp");
    let mut map: std::collections::HashMap<u32, u32, ahash::RandomState> = std::collections::HashMap::with_hasher(state);
    for i in 0..100 {
        *map.entry(i % 7).or_default() += i;
    }
    let sorted: BTreeMap<u32, u32> = map.into_iter().collect();
    format!("stable={same} distinct={differ} sums={:?}", sorted.values().collect::<Vec<_>>())
}

// --- time (fixed timestamps, no clock) ---------------------------------------

fn humantime_check() -> String {
    let d = humantime::parse_duration("1h 30m 5s 250ms").expect("a duration");
    let formatted = humantime::format_duration(std::time::Duration::from_secs(93_784));
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    let parsed = humantime::parse_rfc3339("2023-11-14T22:13:20Z").expect("a timestamp");
    format!("{}ms {formatted} {} same-instant={}", d.as_millis(), humantime::format_rfc3339(t), parsed == t)
}

fn chrono_check() -> String {
    use chrono::{Datelike, NaiveDate};
    let t = chrono::DateTime::from_timestamp(1_700_000_000, 0).expect("in range");
    let leap = NaiveDate::from_ymd_opt(2024, 2, 28).unwrap() + chrono::Days::new(1);
    let parsed = chrono::NaiveDateTime::parse_from_str("2026-05-19 08:30:00", "%Y-%m-%d %H:%M:%S").unwrap();
    format!(
        "{} {} leap-day={leap} ({:?}) parsed+90min={}",
        t.to_rfc3339(),
        t.format("%A %d %B %Y"),
        leap.weekday(),
        parsed + chrono::TimeDelta::minutes(90)
    )
}

fn time_check() -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(1_700_000_000).expect("in range");
    let rfc = t.format(&time::format_description::well_known::Rfc3339).expect("formats");
    let date = time::Date::from_calendar_date(2024, time::Month::February, 29).expect("a leap day");
    let fmt = time::format_description::parse_borrowed::<2>("[day].[month].[year] [hour]:[minute]").expect("a description");
    format!("{rfc} {} ordinal={} weekday={} custom={}", date, date.ordinal(), date.weekday(), t.format(&fmt).unwrap())
}

// --- serde and data formats --------------------------------------------------

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Launch {
    name: String,
    warps: u32,
    arch: Vec<String>,
    #[serde(default)]
    debug: bool,
}

fn serde_check() -> String {
    use serde::Deserialize;
    use serde::de::IntoDeserializer;
    use serde::de::value::{Error as ValueError, MapDeserializer};
    let launch = Launch { name: "sweep".into(), warps: 4224, arch: vec!["sm_90".into(), "gfx90a".into()], debug: true };
    let text = toml::to_string(&launch).expect("serializes");
    let back: Launch = toml::from_str(&text).expect("deserializes");
    // serde alone: a map deserializer from serde's value module.
    let map = MapDeserializer::<_, ValueError>::new([("x", 3u32), ("y", 4u32)].into_iter());
    #[derive(Deserialize)]
    struct Point {
        x: u32,
        y: u32,
    }
    let p = Point::deserialize(map).expect("a point");
    let n = u64::deserialize(IntoDeserializer::<ValueError>::into_deserializer(7u64)).unwrap();
    format!("derive round trip (via toml)={} point=({},{}) value={n}", back == launch, p.x, p.y)
}

fn toml_check() -> String {
    let doc = r#"
        title = "crate sweep"
        [gpu]
        arch = "sm_90"
        warps = 4224
        features = ["threads", "println"]
        [[run]]
        name = "host"
        [[run]]
        name = "h100"
    "#;
    let table: toml::Table = doc.parse().expect("valid TOML");
    let gpu = table["gpu"].as_table().unwrap();
    let runs: Vec<&str> = table["run"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    let launch: Launch = toml::from_str("name = \"x\"\nwarps = 2\narch = [\"sm_80\"]").unwrap();
    format!(
        "title={} arch={} warps={} features={} runs={runs:?} typed={launch:?}",
        table["title"],
        gpu["arch"],
        gpu["warps"].as_integer().unwrap(),
        gpu["features"],
    )
}

#[derive(Debug, serde::Deserialize)]
struct Row {
    crate_name: String,
    downloads_m: f64,
    kind: Option<String>,
}

fn csv_check() -> String {
    let data = "crate_name,downloads_m,kind\nsyn,1000.5,proc-macro\nlibc,900.25,\n\"serde, the crate\",880,derive\n";
    let mut rdr = csv::Reader::from_reader(data.as_bytes());
    let headers = rdr.headers().unwrap().clone();
    let rows: Vec<Row> = rdr.deserialize().collect::<Result<_, _>>().expect("valid rows");
    let total: f64 = rows.iter().map(|r| r.downloads_m).sum();
    let mut wtr = csv::Writer::from_writer(Vec::new());
    wtr.write_record(["a,b", "c"]).unwrap();
    let written = String::from_utf8(wtr.into_inner().unwrap()).unwrap();
    format!(
        "headers={:?} rows={} total={total} names={:?} kinds={:?} written={written:?}",
        headers.iter().collect::<Vec<_>>(),
        rows.len(),
        rows.iter().map(|r| r.crate_name.as_str()).collect::<Vec<_>>(),
        rows.iter().map(|r| r.kind.as_deref()).collect::<Vec<_>>()
    )
}

fn flate2_check() -> String {
    let mut input = Vec::new();
    for i in 0..2000u32 {
        write!(input, "line {} of a repetitive buffer {}\n", i, i % 10).unwrap();
    }
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&input).unwrap();
    let compressed = enc.finish().unwrap();
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(&compressed[..]).read_to_end(&mut out).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&input).unwrap();
    let gz = gz.finish().unwrap();
    let mut gz_out = String::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut gz_out).unwrap();
    format!(
        "{} -> zlib {} bytes, round-trip={} crc32={:08x}; gzip(best) round-trip={}",
        input.len(),
        compressed.len(),
        out == input,
        crc32fast::hash(&out),
        gz_out.as_bytes() == input
    )
}

fn url_check() -> String {
    let base = url::Url::parse("https://user@example.com:8443/a/b/../c?q=1&lang=rust#frag").expect("a URL");
    let joined = base.join("../d/e?x=y").unwrap();
    let pairs: Vec<String> = base.query_pairs().map(|(k, v)| format!("{k}={v}")).collect();
    let idna = url::Url::parse("http://münchen.de/straße").unwrap();
    let mut s = String::new();
    write!(s, "{base} host={:?} port={:?} path={} query={pairs:?} ", base.host_str(), base.port(), base.path()).unwrap();
    write!(s, "joined={joined} idna={idna}").unwrap();
    s
}

// --- random numbers (seeded, no OS randomness) --------------------------------

fn rand_check() -> String {
    use rand::seq::SliceRandom;
    use rand::{RngExt, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let dice: Vec<u32> = (0..8).map(|_| rng.random_range(1..=6)).collect();
    let mut deck: Vec<u32> = (1..=10).collect();
    deck.shuffle(&mut rng);
    let f: f64 = rng.random();
    format!("StdRng(42) dice={dice:?} shuffled={deck:?} f64={f:.6}")
}

fn rand_chacha_check() -> String {
    use rand_chacha::rand_core::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let words: Vec<String> = (0..3).map(|_| format!("{:08x}", rng.next_u32())).collect();
    let mut again = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    format!("ChaCha8(7) {} reproducible={}", words.join(" "), format!("{:08x}", again.next_u32()) == words[0])
}

// --- randomness from the platform ------------------------------------------

/// Randomness from the platform, through getrandom (0.4 under rand, 0.3
/// under ahash): on a GPU the runtime's custom backend asks the host. The
/// values differ from run to run, so only their properties are printed.
fn os_randomness_checks() {
    use rand::RngExt;
    let mut rng = rand::rng();
    let die: u32 = rng.random_range(1..=6);
    let (a, b): (u128, u128) = (rng.random(), rng.random());
    println!("rand (rng(), getrandom 0.4): ok die in 1..=6: {}, two 128-bit draws differ: {}", (1..=6).contains(&die), a != b);
    let mut key = [0u8; 32];
    rand::fill(&mut key);
    println!("rand (fill, getrandom 0.4): ok 32 bytes not all zero: {}", key.iter().any(|&x| x != 0));
    let (s1, s2) = (ahash::RandomState::new(), ahash::RandomState::new());
    println!(
        "ahash (runtime-rng, getrandom 0.3): ok RandomState::new() is stable: {}, two states differ: {}",
        s1.hash_one(1) == s1.hash_one(1),
        s1.hash_one(1) != s2.hash_one(1)
    );
}
