//! Unit tests of spec reading: one test per class of bad input, with the
//! exact messages users see, and round trips through the canonical TOML.

use super::*;
use crate::spec::Backend;
use clap::Parser;

/// A spec file's text with `[sweep]` on line 1 and these axis lines after it.
fn sweep(lines: &str) -> String {
    format!("[sweep]\n{lines}")
}

/// Routing, servers, lambda and service on lines 2-5.
const MINI: &str = "[sweep]\nrouting = [\"random\"]\nservers = [10]\nlambda = [5]\n\
                    service = [\"exp(mean=1)\"]\n";

fn parse(text: &str) -> Result<Spec, SpecError> {
    Spec::from_toml_str(text, "spec.toml", Path::new("."))
}

fn file_err(text: &str) -> String {
    parse(text).expect_err("spec should be refused").0
}

/// `qsweep run`'s flags, as a parser of their own.
#[derive(clap::Parser)]
struct Cli {
    #[command(flatten)]
    args: SweepArgs,
}

fn flags(argv: &[&str]) -> SweepArgs {
    let argv = std::iter::once("qsweep-run").chain(argv.iter().copied());
    Cli::try_parse_from(argv).expect("flags should parse").args
}

fn load(argv: &[&str]) -> Result<Spec, SpecError> {
    Spec::load_in(&flags(argv), Path::new("."))
}

fn flag_err(argv: &[&str]) -> String {
    load(argv).expect_err("flags should be refused").0
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

#[test]
fn clap_definition_is_consistent() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
}

#[test]
fn run_settings_and_flags_match() {
    use clap::CommandFactory;
    use settings::RUN_SETTINGS;
    let command = Cli::command();
    let longs: Vec<&str> = command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .collect();
    for s in RUN_SETTINGS {
        assert!(
            longs.contains(&s.flag),
            "[run] {}: RUN_SETTINGS names --{}, which SweepArgs does not declare",
            s.key,
            s.flag
        );
        assert_eq!(s.flag, s.key.replace('_', "-"), "flags spell keys with '-'");
    }
    for long in &longs {
        let known = RUN_SETTINGS.iter().any(|s| s.flag == *long)
            || SWEEP_KEYS.contains(long)
            || *long == "force";
        assert!(
            known,
            "--{long} on SweepArgs is neither a [sweep] axis, nor --force, nor in RUN_SETTINGS"
        );
    }
    // Each entry reads its own flag's field, and only its own.
    for s in RUN_SETTINGS {
        let arg = command
            .get_arguments()
            .find(|a| a.get_long() == Some(s.flag))
            .unwrap();
        let given = if arg.get_action().takes_values() {
            format!("--{}=x", s.flag)
        } else {
            format!("--{}", s.flag)
        };
        let args = flags(&[&given]);
        for other in RUN_SETTINGS {
            assert_eq!(
                (other.flag_value)(&args).is_some(),
                other.key == s.key,
                "{given}: read by the entry for {}",
                other.key
            );
        }
    }
}

#[test]
fn run_keys_are_listed_once_each_in_messages() {
    let mut at: Vec<usize> = settings::RUN_SETTINGS.iter().map(|s| s.listed_at).collect();
    at.sort_unstable();
    assert_eq!(at, (0..settings::RUN_SETTINGS.len()).collect::<Vec<_>>());
    let e = file_err(&format!("{MINI}[run]\nthreads = 1\nthread = 4\n"));
    assert_eq!(
        e,
        "spec.toml:8: [run] unknown key 'thread'; expected one of reps, customers, warmup, seed, \
         out, threads, allow_unstable, backend, adapter, precision, max_customers, units, quantiles, slo, reneging"
    );
}

#[test]
fn every_run_setting_is_written_in_canonical_order() {
    let spec = load(&[
        "--routing=random",
        "--servers=2",
        "--rho=0.5",
        "--service=exp(rate=3)",
        "--backend=gpu",
        "--adapter=llvm",
        "--seed=9223372036854775808",
        "--precision=0.3",
        "--max-customers=1e6",
        "--warmup=auto",
        "--threads=1",
        "--allow-unstable",
        "--reps=3",
        "--customers=2e2",
        "-o",
        "ok9.csv",
    ])
    .unwrap();
    // As written before the settings table existed (spec hashes depend on it).
    let expected = "[sweep]\nrouting = [\"random\"]\nservers = [2]\nworkers = [1]\n\
                    arrival = [\"exp\"]\nrho = [0.5]\nservice = [\"exp(rate=3)\"]\n\n[run]\n\
                    reps = 3\ncustomers = 200\nwarmup = \"auto\"\nprecision = 0.3\n\
                    max_customers = 1000000\nseed = \"9223372036854775808\"\nout = \"ok9.csv\"\n\
                    threads = 1\nallow_unstable = true\nbackend = \"gpu\"\nadapter = \"llvm\"\n";
    assert_eq!(spec.to_toml(), expected);
}

#[test]
fn built_in_seed_loads_with_20_points_in_documented_order() {
    let spec = Spec::load(&SweepArgs::default()).unwrap();
    assert_eq!(spec.source, SEED_SOURCE);
    assert_eq!(spec.routing, [Routing::Random, Routing::Central]);
    assert_eq!(spec.load, [Load::Lambda(150.0)]);
    let r = &spec.run;
    assert_eq!(
        (r.reps, r.customers, r.warmup, r.seed),
        (512, 200_000, 50_000, 1)
    );
    assert_eq!((r.threads, r.allow_unstable, r.force), (0, false, false));
    assert_eq!(
        (r.backend, &r.out, &r.adapter),
        (Backend::Auto, &None, &None)
    );
    let servers = [51, 60, 75, 100, 150, 200, 500, 1000, 2000, 4000];
    let points = spec.points();
    assert_eq!(points.len(), 20);
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p.index as usize, i);
        let routing = if i < 10 {
            Routing::Random
        } else {
            Routing::Central
        };
        assert_eq!(
            (p.routing, p.servers, p.workers),
            (routing, servers[i % 10], 1)
        );
        assert_eq!(p.lambda, 150.0);
        assert!((p.service.mean() - 1.0 / 3.0).abs() < 1e-15);
        assert!((p.arrival.mean() - 1.0 / 150.0).abs() < 1e-15);
        assert_eq!(p.arrival_text, "exp");
        assert!(p.stable);
    }
    // R = 51 is the study's heaviest point: rho = 150 / (3 * 51) = 0.98.
    assert!((points[0].rho - 150.0 / 153.0).abs() < 1e-12);
    assert!((points[10].rho - 150.0 / 153.0).abs() < 1e-12);
}

#[test]
fn weibull_study_uses_rho_for_every_point() {
    let spec = parse(include_str!("../../../../data/weibull.toml")).unwrap();
    let points = spec.points();
    assert_eq!(points.len(), 2 * 3 * 4);
    let mean = spec.service[0].mean();
    assert!(mean > 0.2 && mean < 0.3, "E[S] = {mean}");
    for p in &points {
        let rho = [0.5, 0.7, 0.9, 0.95][p.index as usize % 4];
        assert_eq!(p.rho, rho);
        let lambda = rho * f64::from(p.servers) / mean;
        assert!((p.lambda - lambda).abs() <= 1e-12 * lambda);
    }
}

#[test]
fn flags_override_axes_and_settings() {
    let spec = load(&[
        "--routing=round_robin",
        "--servers=3",
        "--workers=2",
        "--arrival=erlang(k=4)",
        "--lambda=2.5",
        "--service=det(value=1)",
        "--reps=7",
        "--customers=2e5",
        "--warmup=0",
        "--seed=18446744073709551615",
        "-o",
        "out.csv",
        "-j",
        "3",
        "--allow-unstable",
        "--force",
        "--backend=cpu",
        "--adapter=H200",
    ])
    .unwrap();
    assert_eq!(spec.routing, [Routing::RoundRobin]);
    assert_eq!(
        (spec.servers.as_slice(), spec.workers.as_slice()),
        (&[3][..], &[2][..])
    );
    assert_eq!(spec.arrival[0].text(), "erlang(k=4)");
    assert_eq!(spec.load, [Load::Lambda(2.5)]);
    assert_eq!(spec.service[0].text(), "det(value=1)");
    let expected = RunSettings {
        reps: 7,
        customers: 200_000,
        warmup: 0,
        warmup_auto: false,
        precision: None,
        max_customers: DEFAULT_MAX_CUSTOMERS,
        seed: u64::MAX,
        out: Some(PathBuf::from("out.csv")),
        threads: 3,
        allow_unstable: true,
        force: true,
        backend: Backend::Cpu,
        adapter: Some("H200".into()),
        units: None,
        quantiles: Vec::new(),
        slo: Vec::new(),
        reneging: crate::contract::Reneging::Abandon,
    };
    assert_eq!(spec.run, expected);
    assert_eq!(spec.source, SEED_SOURCE);
}

#[test]
fn flags_override_a_spec_file() {
    let dir = tempdir();
    let path = dir.path().join("study.toml");
    std::fs::write(&path, format!("{MINI}[run]\nreps = 3\nseed = 9\n")).unwrap();
    let mut args = flags(&["--servers", "20,30", "--reps", "4"]);
    args.spec = Some(path.clone());
    let spec = Spec::load(&args).unwrap();
    assert_eq!(spec.source, path.display().to_string());
    assert_eq!(spec.servers, [20, 30]); // whole axis replaced
    assert_eq!(spec.routing, [Routing::Random]); // from the file
    assert_eq!((spec.run.reps, spec.run.seed), (4, 9));
    assert_eq!(spec.run.customers, RunSettings::default().customers);
}

#[test]
fn repeated_list_flags_accumulate() {
    let spec = load(&[
        "--routing",
        "random",
        "--routing",
        "central,round_robin",
        "--servers",
        "1",
        "--servers",
        "2,3",
        "--servers",
        "4",
        "--lambda",
        "0.5",
        "--lambda",
        "0.25",
    ])
    .unwrap();
    let r = [Routing::Random, Routing::Central, Routing::RoundRobin];
    assert_eq!(spec.routing, r);
    assert_eq!(spec.servers, [1, 2, 3, 4]);
    assert_eq!(spec.load, [Load::Lambda(0.5), Load::Lambda(0.25)]);
    assert_eq!(spec.points().len(), 3 * 4 * 2);
}

#[test]
fn list_flags_keep_commas_inside_parentheses() {
    let spec = load(&[
        "--routing",
        "random,central",
        "--servers",
        "51,60",
        "--lambda",
        "150",
        "--service",
        "weibull(shape=0.46,median=0.05,min=0.01,max=30), exp(rate=3)",
        "--arrival",
        "hyperexp(scv=4),exp",
    ])
    .unwrap();
    let texts: Vec<&str> = spec.service.iter().map(Dist::text).collect();
    assert_eq!(
        texts,
        [
            "weibull(shape=0.46,median=0.05,min=0.01,max=30)",
            "exp(rate=3)"
        ]
    );
    let texts: Vec<&str> = spec.arrival.iter().map(Dist::text).collect();
    assert_eq!(texts, ["hyperexp(scv=4)", "exp"]);
    assert_eq!(spec.points().len(), 2 * 2 * 2 * 2);
}

#[test]
fn load_flags_replace_the_files_lambda_or_rho() {
    // The seed has lambda: --rho replaces it.
    let spec = load(&["--rho", "0.5,0.9"]).unwrap();
    assert_eq!(spec.load, [Load::Rho(0.5), Load::Rho(0.9)]);
    // A file with rho: --lambda replaces it.
    let text = sweep("routing = [\"random\"]\nservers = [4]\nrho = [0.5]\nservice = [\"exp\"]\n");
    let text = text.replace("\"exp\"", "\"exp(mean=1)\"");
    let dir = tempdir();
    let path = dir.path().join("rho.toml");
    std::fs::write(&path, text).unwrap();
    let mut args = flags(&["--lambda", "2"]);
    args.spec = Some(path);
    let spec = Spec::load(&args).unwrap();
    assert_eq!(spec.load, [Load::Lambda(2.0)]);
    assert_eq!(spec.points()[0].rho, 0.5);
}

#[test]
fn lambda_and_rho_flags_together_are_refused() {
    let e = flag_err(&["--lambda", "1", "--rho", "0.5"]);
    assert_eq!(
        e,
        "--rho: given together with --lambda; expected exactly one of --lambda or --rho"
    );
}

#[test]
fn lambda_and_rho_in_one_file_are_refused() {
    let e = file_err(&format!("{MINI}rho = [0.5]\n"));
    assert!(
        e.starts_with("spec.toml:6: [sweep] rho: given together with lambda (line 4)"),
        "{e}"
    );
    assert!(e.contains("expected exactly one of lambda or rho"), "{e}");
    // Key order in the file does not matter: the later one is blamed.
    let text = "[sweep]\nrho = 0.5\nrouting = \"random\"\nservers = 1\nlambda = 1\nservice = \"exp(mean=1)\"\n";
    assert!(
        file_err(text).starts_with("spec.toml:5: [sweep] lambda: given together with rho (line 2)")
    );
}

#[test]
fn missing_lambda_and_rho_is_refused() {
    let e = file_err(&MINI.replace("lambda = [5]\n", ""));
    assert!(
        e.starts_with("spec.toml:1: [sweep] lambda/rho: missing; expected exactly one of lambda"),
        "{e}"
    );
}

#[test]
fn missing_axis_is_refused_and_defaults_fill_the_rest() {
    let e = file_err(&MINI.replace("service = [\"exp(mean=1)\"]\n", ""));
    assert!(
        e.starts_with("spec.toml:1: [sweep] service: missing; expected"),
        "{e}"
    );
    assert!(e.contains("--service"), "{e}");
    let e = file_err("");
    assert!(e.starts_with("spec.toml: [sweep] routing: missing"), "{e}");
    let spec = parse(MINI).unwrap();
    assert_eq!(spec.workers, [1]);
    assert_eq!(spec.arrival.len(), 1);
    assert_eq!(spec.arrival[0].text(), "exp");
    let mut run = RunSettings::default();
    assert_eq!(spec.run, run);
    run.reps = 1;
    assert_ne!(spec.run, run);
}

#[test]
fn rho_sets_lambda_at_each_point() {
    let text = sweep(
        "routing = [\"random\", \"central\"]\nservers = [2, 4]\nworkers = [3]\n\
         rho = [0.5, 0.8]\nservice = [\"exp(mean=0.5)\", \"det(value=2)\"]\n",
    );
    let spec = parse(&text).unwrap();
    let points = spec.points();
    assert_eq!(points.len(), 2 * 2 * 2 * 2);
    for p in &points {
        let cap = f64::from(p.servers * p.workers);
        let lambda = p.rho * cap / p.service.mean();
        assert!((p.lambda - lambda).abs() < 1e-12 * lambda, "{p:?}");
        assert!((p.arrival.mean() - 1.0 / p.lambda).abs() < 1e-12 / p.lambda);
    }
    // Innermost axis is service, then load, then workers, servers, routing.
    assert_eq!(points[0].lambda, 0.5 * 6.0 / 0.5);
    assert_eq!(points[1].lambda, 0.5 * 6.0 / 2.0);
    assert_eq!(points[2].lambda, 0.8 * 6.0 / 0.5);
    assert_eq!(points[4].lambda, 0.5 * 12.0 / 0.5);
    assert_eq!(points[8].routing, Routing::Central);
}

#[test]
fn scalar_axes_mean_one_element_lists() {
    let text =
        sweep("routing = \"central\"\nservers = 51\nlambda = 150\nservice = \"exp(rate=3)\"\n");
    let spec = parse(&text).unwrap();
    assert_eq!(spec.routing, [Routing::Central]);
    assert_eq!(spec.servers, [51]);
    assert_eq!(spec.load, [Load::Lambda(150.0)]);
    assert_eq!(spec.points().len(), 1);
}

#[test]
fn unstable_points_are_refused_unless_allowed() {
    let e = load(&["--servers", "51", "--routing", "random", "--lambda", "160"]).unwrap_err();
    assert_eq!(
        e.0,
        "point 0 (routing=random servers=51 lambda=160): unstable, rho = 1.046 >= 1; \
         lower lambda or rho, add servers, or pass --allow-unstable"
    );
    // Found wherever it is in the grid; rho = 1 exactly is unstable too.
    let e = load(&["--servers", "100,50", "--lambda", "150"]).unwrap_err();
    assert!(
        e.0.starts_with("point 1 (routing=random servers=50 lambda=150): unstable, rho = 1.000"),
        "{e}"
    );
    let spec = load(&["--servers", "100,50", "--lambda", "150", "--allow-unstable"]).unwrap();
    let stable: Vec<bool> = spec.points().iter().map(|p| p.stable).collect();
    assert_eq!(stable, [true, false, true, false]);
    let e = file_err(&MINI.replace("lambda = [5]", "lambda = [5, 9, 11]"));
    assert!(
        e.starts_with("point 2 (routing=random servers=10 lambda=11): unstable, rho = 1.100"),
        "{e}"
    );
    let allowed = format!(
        "{}[run]\nallow_unstable = true\n",
        MINI.replace("[5]", "[11]")
    );
    assert!(!parse(&allowed).unwrap().points()[0].stable);
}

#[test]
fn default_out_path_never_returns_an_existing_file() {
    let dir = tempdir();
    let d = dir.path();
    let first = default_out_path(d);
    assert_eq!(first, d.join("qsweep-results.csv"));
    std::fs::write(&first, "x").unwrap();
    let second = default_out_path(d);
    assert_eq!(second, d.join("qsweep-results-2.csv"));
    std::fs::create_dir(&second).unwrap(); // anything at the path counts
    std::fs::write(d.join("qsweep-results-3.csv.partial"), "").unwrap(); // a run in progress
    assert_eq!(default_out_path(d), d.join("qsweep-results-4.csv"));
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(d.join("nowhere"), d.join("qsweep-results-4.csv")).unwrap();
        assert_eq!(default_out_path(d), d.join("qsweep-results-5.csv"));
    }
    for _ in 0..5 {
        let p = default_out_path(d);
        assert!(p.symlink_metadata().is_err(), "{} exists", p.display());
        std::fs::write(&p, "").unwrap();
    }
}

#[test]
fn to_toml_round_trips() {
    let seed = Spec::load(&SweepArgs::default()).unwrap();
    let back = Spec::from_toml_str(&seed.to_toml(), SEED_SOURCE, Path::new(".")).unwrap();
    assert_eq!(back, seed);

    let spec = load(&[
        "--routing",
        "central,random,round_robin",
        "--servers",
        "1,7",
        "--workers",
        "2,3",
        "--arrival",
        "exp,hyperexp(scv=4),erlang(k=3)",
        "--rho",
        "0.1,0.30000000000000004,0.3333333333333333,1e-7,0.95",
        "--service",
        "weibull(shape=0.46,median=0.05,min=0.01,max=30),det(value=0.1)",
        "--seed",
        "18446744073709551000",
        "--reps",
        "3",
        "--customers",
        "10",
        "--warmup",
        "0",
        "-j",
        "5",
        "--backend",
        "gpu",
        "--adapter",
        "Nvidia \"H200\"",
        "-o",
        "dir with 'quotes'\\out.csv",
    ])
    .unwrap();
    let text = spec.to_toml();
    let back = Spec::from_toml_str(&text, SEED_SOURCE, Path::new(".")).unwrap();
    assert_eq!(back, spec, "{text}");
    assert_eq!(back.to_toml(), text);
    // lambda, large and tiny values, allow_unstable.
    let spec = load(&["--lambda", "1e30,1e-30,150,1e-5", "--allow-unstable"]).unwrap();
    let back = Spec::from_toml_str(&spec.to_toml(), SEED_SOURCE, Path::new(".")).unwrap();
    assert_eq!(back, spec);
    assert_eq!(back.points(), spec.points());
    // `force` is about the invocation, not the study.
    let forced = load(&["--force"]).unwrap();
    assert!(!forced.to_toml().contains("force"));
}

#[test]
fn relative_empirical_paths_resolve_against_spec_dir_or_cwd() {
    let dir = tempdir();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("times.txt"), "0.1\n0.2\n0.6\n").unwrap();
    let path = sub.join("spec.toml");
    std::fs::write(
        &path,
        MINI.replace("exp(mean=1)", "empirical(file=times.txt)"),
    )
    .unwrap();
    // From the file: against the file's directory, whatever the cwd.
    let args = SweepArgs {
        spec: Some(path.clone()),
        ..SweepArgs::default()
    };
    let spec = Spec::load_in(&args, dir.path()).unwrap();
    // Resampled (issue 25): the mean of the observed values, (0.1 + 0.2 + 0.6) / 3.
    assert!((spec.service[0].mean() - 0.3).abs() < 1e-6);
    // From a flag: against the current directory.
    let mut args = flags(&["--service", "empirical(file=times.txt)"]);
    args.spec = Some(path);
    assert!(Spec::load_in(&args, &sub).is_ok());
    let e = Spec::load_in(&args, dir.path()).unwrap_err().0;
    assert!(
        e.starts_with("--service: empirical file 'times.txt' cannot be read"),
        "{e}"
    );
}

// ----- one test per class of bad input -----

#[test]
fn zero_or_negative_rates_are_refused() {
    let e = file_err(&MINI.replace("lambda = [5]", "lambda = [5,\n  0]"));
    assert_eq!(
        e,
        "spec.toml:5: [sweep] lambda: 0 is not a valid value; \
         expected finite numbers > 0 (arrival rates, requests per second)"
    );
    let e = file_err(&MINI.replace("lambda = [5]", "rho = -0.5"));
    assert!(
        e.starts_with(
            "spec.toml:4: [sweep] rho: -0.5 is not a valid value; expected finite numbers > 0"
        ),
        "{e}"
    );
    let e = file_err(&MINI.replace("lambda = [5]", "lambda = nan"));
    assert!(
        e.starts_with("spec.toml:4: [sweep] lambda: nan is not a valid value"),
        "{e}"
    );
    let e = flag_err(&["--lambda", "-5"]);
    assert!(
        e.starts_with("--lambda: '-5' is not a valid value; expected finite numbers > 0"),
        "{e}"
    );
    let e = flag_err(&["--rho", "0.5,0"]);
    assert!(
        e.starts_with("--rho: '0' is not a valid value; expected finite numbers > 0"),
        "{e}"
    );
    let e = flag_err(&["--lambda", "inf"]);
    assert!(e.starts_with("--lambda: 'inf' is not a valid value"), "{e}");
}

#[test]
fn rates_the_engines_cannot_represent_are_refused() {
    // A huge rho implies a huge lambda; refused before points() could panic.
    let e = flag_err(&["--rho", "1e300", "--allow-unstable", "--routing", "central"]);
    assert!(
        e.starts_with("point 0 (routing=central servers=51 lambda=1.53e302): lambda is out of range; expected arrival rates from 1e-30 to 1e30"),
        "{e}"
    );
    let e = flag_err(&[
        "--lambda",
        "5e-324",
        "--servers",
        "1",
        "--routing",
        "random",
    ]);
    assert!(
        e.starts_with("point 0 (routing=random servers=1 lambda=5e-324): lambda is out of range"),
        "{e}"
    );
    let e = flag_err(&["--servers", "65536", "--workers", "65536"]);
    assert!(
        e.starts_with("[sweep] servers × workers = 65536 × 65536 is too large"),
        "{e}"
    );
}

#[test]
fn zero_servers_are_refused() {
    let e = file_err(&MINI.replace("servers = [10]", "servers = [10, 0]"));
    assert_eq!(
        e,
        "spec.toml:3: [sweep] servers: 0 is not a valid value; expected integers >= 1"
    );
    assert_eq!(
        flag_err(&["--servers", "0"]),
        "--servers: '0' is not a valid value; expected integers >= 1"
    );
    let e = flag_err(&["--workers", "1.5"]);
    assert_eq!(
        e,
        "--workers: '1.5' is not a valid value; expected integers >= 1"
    );
    let e = file_err(&format!("{MINI}workers = -2\n"));
    assert_eq!(
        e,
        "spec.toml:6: [sweep] workers: -2 is not a valid value; expected integers >= 1"
    );
}

#[test]
fn unknown_laws_are_refused() {
    let e = file_err(&MINI.replace("exp(mean=1)", "expo"));
    assert!(
        e.starts_with("spec.toml:5: [sweep] service: unknown law 'expo'; expected one of exp"),
        "{e}"
    );
    let e = file_err(&format!("{MINI}arrival = [\"exp\",\n\"gauss\"]\n"));
    assert!(
        e.starts_with("spec.toml:7: [sweep] arrival: unknown law 'gauss'"),
        "{e}"
    );
    let e = flag_err(&["--service", "expo(mean=1)"]);
    assert!(
        e.starts_with("--service: unknown law 'expo'; expected one of exp"),
        "{e}"
    );
}

#[test]
fn unknown_law_keys_are_refused() {
    let e = file_err(&MINI.replace("exp(mean=1)", "exp(meen=1)"));
    assert!(
        e.starts_with("spec.toml:5: [sweep] service: exp: unknown key 'meen'; expected mean"),
        "{e}"
    );
    // Arrival laws take their mean from the load.
    let e = flag_err(&["--arrival", "exp(mean=2)"]);
    assert!(
        e.starts_with("--arrival: exp: mean= is not allowed for arrival laws"),
        "{e}"
    );
}

#[test]
fn missing_or_malformed_empirical_files_are_refused() {
    let dir = tempdir();
    let e = Spec::from_toml_str(
        &MINI.replace("exp(mean=1)", "empirical(file=none.txt)"),
        "spec.toml",
        dir.path(),
    )
    .unwrap_err()
    .0;
    assert!(
        e.starts_with("spec.toml:5: [sweep] service: empirical file 'none.txt' cannot be read"),
        "{e}"
    );
    std::fs::write(dir.path().join("bad.txt"), "0.1\nfast\n").unwrap();
    let e = Spec::from_toml_str(
        &MINI.replace("exp(mean=1)", "empirical(file=bad.txt)"),
        "spec.toml",
        dir.path(),
    )
    .unwrap_err()
    .0;
    assert!(
        e.starts_with(
            "spec.toml:5: [sweep] service: empirical file 'bad.txt' line 2: 'fast' is not a number"
        ),
        "{e}"
    );
}

#[test]
fn zero_customers_or_reps_are_refused() {
    let e = file_err(&format!("{MINI}[run]\nreps = 4\ncustomers = 0\n"));
    assert_eq!(
        e,
        "spec.toml:8: [run] customers: 0 is not a valid value; expected an integer >= 1"
    );
    let e = file_err(&format!("{MINI}[run]\nreps = 0\n"));
    assert_eq!(
        e,
        "spec.toml:7: [run] reps: 0 is not a valid value; expected an integer >= 1"
    );
    assert_eq!(
        flag_err(&["--reps", "0"]),
        "--reps: '0' is not a valid value; expected an integer >= 1"
    );
    let e = flag_err(&["--customers", "0"]);
    assert_eq!(
        e,
        "--customers: '0' is not a valid value; expected an integer >= 1"
    );
    let e = flag_err(&["--warmup", "-1"]);
    assert_eq!(
        e,
        "--warmup: '-1' is not a valid value; expected an integer >= 0, or \"auto\" \
         (chosen per point by MSER-5)"
    );
    let e = flag_err(&["--customers", "4294967295", "--warmup", "1"]);
    assert!(
        e.starts_with("[run] customers + warmup = 4294967296 is too large"),
        "{e}"
    );
}

#[test]
fn empty_axes_are_refused() {
    let e = file_err(&MINI.replace("servers = [10]", "servers = []"));
    assert_eq!(
        e,
        "spec.toml:3: [sweep] servers: empty list; expected at least one of integers >= 1"
    );
    let e = file_err(&MINI.replace("[\"exp(mean=1)\"]", "[ ]"));
    assert!(
        e.starts_with("spec.toml:5: [sweep] service: empty list"),
        "{e}"
    );
    let e = flag_err(&["--servers", ""]);
    assert!(e.starts_with("--servers: empty list"), "{e}");
    let e = flag_err(&["--servers", "1,,2"]);
    assert!(e.starts_with("--servers: item 2 of '1,,2' is empty"), "{e}");
}

#[test]
fn unknown_routing_is_refused() {
    let e = file_err(&MINI.replace("[\"random\"]", "[\"random\", \"smart\"]"));
    assert_eq!(
        e,
        "spec.toml:2: [sweep] routing: unknown routing 'smart'; \
         expected one of random, round_robin, central, jsq, pod, jiq, lwl, weighted"
    );
    let e = flag_err(&["--routing", "random,smart"]);
    assert_eq!(
        e,
        "--routing: unknown routing 'smart'; expected one of random, round_robin, central, \
         jsq, pod, jiq, lwl, weighted"
    );
    let e = file_err(&MINI.replace("[\"random\"]", "[1]"));
    assert_eq!(e, "spec.toml:2: [sweep] routing: 1 is not a valid value; expected one of random, round_robin, central, jsq, pod, jiq, lwl, weighted");
}

#[test]
fn wrong_toml_types_are_refused() {
    let e = file_err(&MINI.replace("servers = [10]", "servers = \"many\""));
    assert_eq!(
        e,
        "spec.toml:3: [sweep] servers: \"many\" is not a valid value; expected integers >= 1"
    );
    let e = file_err(&MINI.replace("[\"exp(mean=1)\"]", "[[\"exp\"]]"));
    assert!(
        e.starts_with("spec.toml:5: [sweep] service: [\"exp\"] is not a valid value"),
        "{e}"
    );
    let e = file_err(&format!("{MINI}[run]\nallow_unstable = \"yes\"\n"));
    assert_eq!(
        e,
        "spec.toml:7: [run] allow_unstable: \"yes\" is not a valid value; expected true or false"
    );
    let e = file_err(&format!("{MINI}[run]\nbackend = \"tpu\"\n"));
    assert_eq!(
        e,
        "spec.toml:7: [run] backend: \"tpu\" is not a valid value; expected one of auto, gpu, cpu"
    );
    let e = file_err(&format!("{MINI}[run]\nseed = -1\n"));
    assert!(
        e.starts_with(
            "spec.toml:7: [run] seed: -1 is not a valid value; expected an integer from 0"
        ),
        "{e}"
    );
    let e = file_err("sweep = 5\n");
    assert_eq!(
        e,
        "spec.toml:1: sweep: 5 is not valid here; expected a table [sweep]"
    );
    assert!(flag_err(&["--backend", "tpu"]).starts_with("--backend: 'tpu' is not a valid value"));
    assert!(flag_err(&["--seed", "-1"]).starts_with("--seed: '-1' is not a valid value"));
}

#[test]
fn toml_syntax_errors_are_refused_with_their_line() {
    let e = file_err(&MINI.replace("lambda = [5]", "lambda = = 5"));
    assert!(e.starts_with("spec.toml:4: invalid TOML: "), "{e}");
    // An unclosed list is noticed where the parser gives up.
    let e = file_err(&MINI.replace("lambda = [5]", "lambda = [5"));
    assert!(e.starts_with("spec.toml:5: invalid TOML: "), "{e}");
    assert!(!e.contains('\n'), "{e}");
    let e = file_err(&format!("{MINI}servers = [3]\n"));
    assert_eq!(
        e,
        "spec.toml:6: invalid TOML: duplicate key 'servers'; expected each key and table once"
    );
}

#[test]
fn every_bad_key_of_a_file_is_named_at_once() {
    // Issue 26: three bad keys in two tables, one line each, in file order.
    let text = "[sweep]\nrouting = [\"random\"]\nservers = [0]\nlambda = [5]\n\
                service = [\"exp(meen=1)\"]\n[run]\nreps = 0\ncustomers = 100\n";
    let e = file_err(text);
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 3, "{e}");
    assert!(lines[0].starts_with("spec.toml:3: [sweep] servers"), "{e}");
    assert!(
        lines[1].starts_with("spec.toml:5: [sweep] service: exp: unknown key 'meen'"),
        "{e}"
    );
    assert!(lines[2].starts_with("spec.toml:7: [run] reps"), "{e}");
    // A good key between bad ones is still read, and one error stays one line.
    let one = file_err(&format!("{MINI}[run]\nreps = 0\n"));
    assert_eq!(one.lines().count(), 1, "{one}");
    // Beyond three, the third line counts the rest.
    let text = "[sweep]\nservers = [0]\nworkers = [0]\nchoices = [0]\nrouters = [0]\n\
                bogus = 1\n";
    let e = file_err(text);
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), SHOWN_ERRORS, "{e}");
    assert!(lines[0].starts_with("spec.toml:2: [sweep] servers"), "{e}");
    assert!(lines[2].starts_with("spec.toml:4: [sweep] choices"), "{e}");
    assert!(lines[2].ends_with(" (and 2 more errors)"), "{e}");
}

#[test]
fn unknown_tables_and_keys_are_refused() {
    let e = file_err("[sweep]\nrouting = [\"random\"]\nsever = [1]\n");
    assert_eq!(
        e,
        "spec.toml:3: [sweep] unknown key 'sever'; expected one of routing, choices, \
         routers, servers, speeds, workers, arrival, lambda, rho, service, patience, capacity"
    );
    let e = file_err(&format!("{MINI}[run]\nreps = 2\nthread = 4\n"));
    assert!(
        e.starts_with("spec.toml:8: [run] unknown key 'thread'; expected one of reps, customers"),
        "{e}"
    );
    let e = file_err(&format!("{MINI}\n[runn]\nreps = 2\n"));
    assert_eq!(
        e,
        "spec.toml:7: [runn]: unknown table; expected [sweep] and [run]"
    );
    let e = file_err(&format!("reps = 2\n{MINI}"));
    assert!(
        e.starts_with("spec.toml:1: unknown top-level key 'reps'"),
        "{e}"
    );
    assert!(e.contains("belongs in [run]"), "{e}");
    let e = file_err(&format!("{MINI}reps = 2\n"));
    assert!(
        e.starts_with("spec.toml:6: [sweep] unknown key 'reps'") && e.contains("belongs in [run]"),
        "{e}"
    );
}

#[test]
fn unreadable_spec_files_are_refused() {
    let dir = tempdir();
    let path = dir.path().join("missing.toml");
    let args = SweepArgs {
        spec: Some(path.clone()),
        ..SweepArgs::default()
    };
    let e = Spec::load(&args).unwrap_err().0;
    assert!(
        e.starts_with(&format!("{}: cannot read spec file: ", path.display())),
        "{e}"
    );
    assert!(e.ends_with("expected a readable TOML file"), "{e}");
    let args = SweepArgs {
        spec: Some(dir.path().to_path_buf()),
        ..SweepArgs::default()
    };
    assert!(Spec::load(&args)
        .unwrap_err()
        .0
        .contains("cannot read spec file"));
}

#[test]
fn choices_and_routers_multiply_only_the_policies_they_apply_to() {
    let spec = load(&[
        "--routing",
        "random,pod,jsq,lwl",
        "--choices",
        "2,3",
        "--routers",
        "1,4",
        "--servers",
        "10,20",
        "--lambda",
        "5",
    ])
    .unwrap();
    let points = spec.points();
    // random 1, pod 2 × 2, jsq 2, lwl 1; times 2 servers.
    assert_eq!(points.len(), 16);
    assert_eq!(spec.point_count(), 16);
    let cells: Vec<(&str, Option<u32>, u32, u32)> = points
        .iter()
        .map(|p| (p.routing.name(), p.choices, p.routers, p.servers))
        .collect();
    assert_eq!(
        cells,
        [
            ("random", None, 1, 10),
            ("random", None, 1, 20),
            ("pod", Some(2), 1, 10),
            ("pod", Some(2), 1, 20),
            ("pod", Some(2), 4, 10),
            ("pod", Some(2), 4, 20),
            ("pod", Some(3), 1, 10),
            ("pod", Some(3), 1, 20),
            ("pod", Some(3), 4, 10),
            ("pod", Some(3), 4, 20),
            ("jsq", None, 1, 10),
            ("jsq", None, 1, 20),
            ("jsq", None, 4, 10),
            ("jsq", None, 4, 20),
            ("lwl", None, 1, 10),
            ("lwl", None, 1, 20),
        ]
    );
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p.index as usize, i);
    }
    assert_eq!(
        spec.describe(&points[5]),
        "routing=pod choices=2 routers=4 servers=20 lambda=5"
    );
    // Defaults: choices 2, routers 1, and neither changes other points.
    let spec = parse(&MINI.replace("\"random\"", "\"pod\"")).unwrap();
    assert_eq!(
        (spec.choices.as_slice(), spec.routers.as_slice()),
        (&[2][..], &[1][..])
    );
    assert_eq!(spec.points()[0].choices, Some(2));
    assert_eq!(parse(MINI).unwrap().points()[0].choices, None);
}

#[test]
fn choices_and_routers_are_validated() {
    let e = file_err(&sweep(
        "routing = \"pod\"\nchoices = [2, 0]\nservers = 4\nlambda = 1\nservice = \"exp(mean=1)\"\n",
    ));
    assert_eq!(
        e,
        "spec.toml:3: [sweep] choices: 0 is not a valid value; expected integers from 1 to 32 \
         (servers sampled per request by pod)"
    );
    let e = flag_err(&["--choices", "33"]);
    assert!(
        e.starts_with("--choices: '33' is not a valid value; expected integers from 1 to 32"),
        "{e}"
    );
    let e = flag_err(&["--routers", "0"]);
    assert!(
        e.starts_with("--routers: '0' is not a valid value; expected integers from 1 to 1024"),
        "{e}"
    );
    assert!(flag_err(&["--routers", "1025"]).starts_with("--routers: '1025'"));
    let e = file_err(&sweep("routing = \"jsq\"\nrouters = [\"many\"]\nservers = 4\nlambda = 1\nservice = \"exp(mean=1)\"\n"));
    assert!(
        e.starts_with("spec.toml:3: [sweep] routers: \"many\" is not a valid value"),
        "{e}"
    );
    // Dynamic policies dispatch to single-worker servers.
    let e = flag_err(&[
        "--routing",
        "random,jsq",
        "--workers",
        "2",
        "--servers",
        "100",
    ]);
    assert!(
        e.starts_with("point 1 (routing=jsq servers=100 workers=2 lambda=150): jsq dispatches to single-worker FIFO servers; expected workers = 1"),
        "{e}"
    );
    let e = flag_err(&[
        "--routing",
        "central",
        "--routers",
        "1,2",
        "--workers",
        "2",
        "--servers",
        "100",
    ]);
    assert!(
        e.starts_with("point 1 (routing=central routers=2 servers=100 workers=2 lambda=150): central with routers > 1 dispatches"),
        "{e}"
    );
    assert!(load(&[
        "--routing",
        "central",
        "--routers",
        "1",
        "--workers",
        "2",
        "--servers",
        "100"
    ])
    .is_ok());
}

#[test]
fn choices_and_routers_round_trip_and_stay_out_of_default_specs() {
    let seed = Spec::load(&SweepArgs::default()).unwrap();
    assert!(!seed.to_toml().contains("choices") && !seed.to_toml().contains("routers"));
    let spec = load(&[
        "--routing",
        "pod,central,jiq",
        "--choices",
        "3,5",
        "--routers",
        "2,8",
    ])
    .unwrap();
    let text = spec.to_toml();
    assert!(
        text.contains("choices = [3, 5]\nrouters = [2, 8]\n"),
        "{text}"
    );
    let back = Spec::from_toml_str(&text, SEED_SOURCE, Path::new(".")).unwrap();
    assert_eq!(back, spec);
    assert_eq!(back.points(), spec.points());
}

#[test]
fn errors_from_a_spec_file_name_the_file_given() {
    let dir = tempdir();
    let path = dir.path().join("study.toml");
    std::fs::write(&path, MINI.replace("servers = [10]", "servers = [0]")).unwrap();
    let args = SweepArgs {
        spec: Some(path.clone()),
        ..SweepArgs::default()
    };
    let e = Spec::load(&args).unwrap_err().0;
    assert_eq!(
        e,
        format!(
            "{}:3: [sweep] servers: 0 is not a valid value; expected integers >= 1",
            path.display()
        )
    );
}

#[test]
fn ranges_expand_to_the_lists_they_stand_for_with_the_same_hash() {
    // A flag range and the list typed out are one spec: equal, with one
    // canonical TOML and so one spec hash.
    let ranged = load(&["--rho", "0.5:0.95:0.05", "--servers", "1:4,geom(10,1000,3)"]).unwrap();
    let typed = load(&[
        "--rho",
        "0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95",
        "--servers",
        "1,2,3,4,10,100,1000",
    ])
    .unwrap();
    assert_eq!(ranged, typed);
    assert_eq!(ranged.to_toml(), typed.to_toml());
    assert_eq!(
        crate::provenance::spec_hash(&ranged, &[0.0]),
        crate::provenance::spec_hash(&typed, &[0.0])
    );
    // A spec file's range, as a string element among plain values.
    let file = parse(
        &MINI
            .replace("lambda = [5]", "lambda = [\"1:3\", 7]")
            .replace("servers = [10]", "servers = \"geom(10,1000,3)\""),
    )
    .unwrap();
    assert_eq!(file.servers, [10, 100, 1000]);
    let lambdas: Vec<f64> = file.load.iter().map(|l| l.value()).collect();
    assert_eq!(lambdas, [1.0, 2.0, 3.0, 7.0]);
    // The notes say what each range stands for; a flag's replaces the file's.
    let notes = ranged.notes();
    assert!(
        notes.contains(&"rho 0.5:0.95:0.05 = 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95 (10 values)".to_string()),
        "{notes:?}"
    );
    assert!(notes.contains(&"servers geom(10,1000,3) = 10, 100, 1000 (3 values)".to_string()));
    assert!(
        typed.notes().iter().all(|n| !n.contains(" = ")),
        "{:?}",
        typed.notes()
    );
    let dir = tempdir();
    let spec = dir.path().join("s.toml");
    std::fs::write(&spec, MINI.replace("lambda = [5]", "lambda = \"1:3\"")).unwrap();
    let path = spec.to_str().unwrap();
    let over = load(&[path, "--rho", "0.1:0.2:0.1"]).unwrap();
    assert_eq!(over.notes(), ["rho 0.1:0.2:0.1 = 0.1, 0.2 (2 values)"]);
    // Integer axes: choices and routers take ranges too.
    let d = load(&["--routing", "pod", "--servers", "80", "--choices", "2:4"]).unwrap();
    assert_eq!(d.choices, [2, 3, 4]);
    let k = load(&[
        "--routing",
        "jsq",
        "--servers",
        "80",
        "--routers",
        "geom(1,8,4)",
    ])
    .unwrap();
    assert_eq!(k.routers, [1, 2, 4, 8]);
}

#[test]
fn bad_ranges_name_the_axis_and_the_value() {
    assert_eq!(
        flag_err(&["--rho", "0.9:0.5:0.1"]),
        "--rho: '0.9:0.5:0.1' is not a valid range: stop is below start; expected \
         start:stop:step (stop included) or geom(start,stop,count)"
    );
    assert_eq!(
        flag_err(&["--servers", "0:4"]),
        "--servers: 0 is not a valid value; expected integers >= 1 (from the range '0:4')"
    );
    assert_eq!(
        flag_err(&["--choices", "30:40:5", "--routing", "pod"]),
        "--choices: 35 is not a valid value; expected integers from 1 to 32 (servers sampled \
         per request by pod) (from the range '30:40:5')"
    );
    assert!(flag_err(&["--servers", "1:4:0.5"]).contains("step '0.5' is not an integer"));
    assert_eq!(
        flag_err(&["--lambda", "0:2"]),
        "--lambda: 0 is not a valid value; expected finite numbers > 0 (arrival rates, \
         requests per second) (from the range '0:2')"
    );
    let e = file_err(&MINI.replace("lambda = [5]", "lambda = [\"5:1\"]"));
    assert_eq!(
        e,
        "spec.toml:4: [sweep] lambda: '5:1' is not a valid range: stop is below start; \
         expected start:stop:step (stop included) or geom(start,stop,count)"
    );
    let e = file_err(&MINI.replace("servers = [10]", "servers = [\"geom(1,10,99999999)\"]"));
    assert!(
        e.starts_with("spec.toml:3: [sweep] servers: 'geom(1,10,99999999)' is not a valid range"),
        "{e}"
    );
}

#[test]
fn units_are_a_recorded_label_and_only_known_ones() {
    let spec = load(&["--units", "ms"]).unwrap();
    assert_eq!(spec.run.units.as_deref(), Some("ms"));
    let text = spec.to_toml();
    assert!(text.ends_with("units = \"ms\"\n"), "{text}");
    assert_eq!(units_in_toml(&text).as_deref(), Some("ms"));
    // Unsaid: not written, so older specs keep their canonical TOML.
    let plain = load(&[]).unwrap();
    assert!(!plain.to_toml().contains("units"));
    assert_eq!(units_in_toml(&plain.to_toml()), None);
    let back = Spec::from_toml_str(&text, SEED_SOURCE, Path::new(".")).unwrap();
    assert_eq!(back, spec);
    assert_eq!(
        flag_err(&["--units", "parsecs"]),
        "--units: 'parsecs' is not a valid value; expected a time unit: s, ms, us, µs, ns, min \
         or h (the unit of the spec's times)"
    );
    let e = file_err(&format!("{MINI}[run]\nunits = 5\n"));
    assert!(
        e.starts_with("spec.toml:7: [run] units: 5 is not a valid value"),
        "{e}"
    );
}

#[test]
fn quantiles_are_probabilities_each_once() {
    let spec = load(&["--quantiles", "0.5, 0.9999"]).unwrap();
    assert_eq!(spec.run.quantiles, [0.5, 0.9999]);
    let text = spec.to_toml();
    assert!(text.ends_with("quantiles = [0.5, 0.9999]\n"), "{text}");
    let back = Spec::from_toml_str(&text, SEED_SOURCE, Path::new(".")).unwrap();
    assert_eq!(back, spec);
    assert!(!load(&[]).unwrap().to_toml().contains("quantiles"));
    let file = parse(&format!("{MINI}[run]\nquantiles = 0.25\n")).unwrap();
    assert_eq!(file.run.quantiles, [0.25]);
    for bad in ["1", "0", "0.5,0.5", "x", "0.5,,0.9", "-0.1"] {
        assert_eq!(
            flag_err(&["--quantiles", bad]),
            format!(
                "--quantiles: '{bad}' is not a valid value; expected a list of probabilities \
                 between 0 and 1, each once (e.g. 0.5,0.99,0.9999)"
            )
        );
    }
    let e = file_err(&format!("{MINI}[run]\nquantiles = [0.5, \"a\"]\n"));
    assert!(
        e.starts_with("spec.toml:7: [run] quantiles: [0.5, \"a\"] is not a valid value"),
        "{e}"
    );
    // Each refused array is shown, with why in the expectation (issue 40).
    for (slo, shown) in [
        ("[1, 1]", "[1, 1]"),
        ("[]", "[]"),
        ("[1, 2, 3, 4, 5]", "[1, 2, 3, 4, 5]"),
        ("[1e400]", "[1e400]"),
    ] {
        let e = file_err(&format!("{MINI}[run]\nslo = {slo}\n"));
        assert!(
            e.starts_with(&format!("spec.toml:7: [run] slo: {shown} is not a valid value; expected a list of at most 4 wait thresholds, each once, each a number from 0 to 3.4e38")),
            "{e}"
        );
    }
}

#[test]
fn a_fleet_takes_the_place_of_the_servers_axis() {
    let text = "[sweep]\nrouting = [\"random\", \"weighted\", \"jsq\"]\n\
                speeds = [\"40x1,10x2\", \"60x1\"]\nlambda = [150]\n\
                service = [\"exp(rate=3)\"]\n";
    // Random routing sends 3/s to each of 50 dynos: the slow ones at rho 1,
    // refused, with why.
    let e = file_err(text);
    assert!(
        e.contains("unstable, its slowest class's rho = 1.000 >= 1 under random routing"),
        "{e}"
    );
    let text = &format!("{text}\n[run]\nallow_unstable = true\n");
    let spec = parse(text).unwrap();
    assert_eq!(spec.servers, [50, 60]);
    let points = spec.points();
    assert_eq!(points.len(), 6);
    // rho over the capacity: 150 / 3 / 60 for both fleets.
    for p in &points {
        assert!((p.rho - 50.0 / 60.0).abs() < 1e-12, "{}", p.rho);
        assert_eq!(p.servers, p.fleet.as_ref().unwrap().servers());
    }
    assert!(!points[0].stable);
    assert!(points[1].stable && points[2].stable);
    // The canonical TOML keeps the fleets, and reads back.
    let back = Spec::from_toml_str(&spec.to_toml(), "spec.toml", Path::new(".")).unwrap();
    assert_eq!(back, spec);
    let both = file_err(&text.replace("lambda", "servers = [4]\nlambda"));
    assert!(
        both.contains("speeds: given together with servers"),
        "{both}"
    );
    let bad = file_err(&text.replace("40x1,10x2", "40x1,10y2"));
    assert!(
        bad.starts_with("spec.toml:3: [sweep] speeds: '40x1,10y2' has '10y2', not count x speed"),
        "{bad}"
    );
}
