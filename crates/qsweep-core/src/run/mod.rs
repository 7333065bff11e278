//! Running a sweep: prepared grid points → engine calls → statistics → one
//! [`PointResult`] per point, in grid order, as each completes.
//!
//! - [`point`]: a grid point made ready for the engines (its `PointParams`,
//!   analytic baseline, warm-up pilots), and what a finished point reports;
//! - [`rounds`]: the one run loop (engine calls cut by time, rounds; a
//!   fixed-size run is its one-round case); `growing` runs a whole batch
//!   with queues re-run larger where they overflowed;
//! - [`precision`]: the stopping rule of `--precision`;
//! - [`warmup`]: `--warmup auto` (MSER-5 on CPU pilot runs);
//! - [`resume`]: `--shard`, reading an existing CSV for `--resume` and
//!   `merge`, and carrying on after an engine failure;
//! - [`session`]: the lifecycle of `qsweep run` around the loop: checks on
//!   the output, the `.meta.json`, rows written as points finish;
//!   `out_file` holds its rules about the output's paths (`.partial`, the
//!   lock, inputs refused as outputs) and `from_meta` reads a run's spec
//!   back from a `.meta.json` (`--from-meta`);
//! - [`row`]: a finished point as its results-CSV row;
//! - [`report`]: a finished point's progress line and warnings;
//! - [`driver`]: the one run driver of the CLI and the Python module
//!   (session, engine, points, finish), with the front end as observer;
//! - [`interrupt`]: Ctrl-C and SIGTERM;
//! - [`calibrate`]: an engine's measured speed on a sample of the sweep's
//!   own points, and the engine chosen (the chooser itself is passed in by
//!   the front end: `qsweep_backend::backend::choose_for`);
//! - [`estimate`]: a run's memory (refused beyond the limit before anything
//!   is allocated) and time (calibrated on the engine), for `--dry-run`.
//!
//! Dependencies point one way: `driver` → `session` → (`row`, `report`) →
//! `point`; `session` → `resume` → `rounds` → `point` →
//! (`precision`, `warmup`).

pub mod calibrate;
pub mod driver;
pub mod estimate;
mod from_meta;
pub mod growing;
pub mod interrupt;
mod out_file;
pub mod point;
pub mod precision;
pub mod report;
pub mod resume;
pub mod rounds;
pub mod row;
pub mod session;
pub mod warmup;

pub use point::{analytic_table, baseline, prepare, PointResult, PointsFailed, PreparedPoint};
pub use rounds::{run_points, run_points_at, run_points_until, Interrupted, CHUNK_REPS};
