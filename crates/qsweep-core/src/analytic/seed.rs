//! The published table of the seed analysis and its exact counterparts.
//!
//! Why this module exists: the project started from a published analysis
//! (lambda = 150/s, mu = 3/s, "dumb" vs "smart" routing) whose "smart"
//! column turns out to be `1/(R mu - lambda)`, the Erlang C mean with the
//! probability of waiting forced to 1. Keeping its figures next to the
//! exact M/M/1 and Erlang C values lets `qsweep` show the discrepancy.

use super::mmc_mean_wait;

/// Arrival rate of the published seed analysis, requests per second.
pub const SEED_LAMBDA: f64 = 150.0;
/// Service rate per dyno of the seed analysis (the text gives a mean service
/// time of 306 ms, mu ~= 3; its table is computed with mu = 3 exactly).
pub const SEED_MU: f64 = 3.0;

/// One row of the published seed table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PublishedSeedFigure {
    /// R, number of dynos (one worker each).
    pub servers: u32,
    /// Published "dumb (random) routing" mean queue time, ms.
    pub dumb_ms: f64,
    /// Published "smart (central) routing" mean queue time, ms.
    pub smart_ms: f64,
}

const fn seed(servers: u32, dumb_ms: f64, smart_ms: f64) -> PublishedSeedFigure {
    PublishedSeedFigure {
        servers,
        dumb_ms,
        smart_ms,
    }
}

/// The published table of the analysis that started the project
/// (lambda = 150/s, mu = 3/s).
pub const PUBLISHED_SEED_FIGURES: [PublishedSeedFigure; 10] = [
    seed(51, 16667.0, 333.0),
    seed(60, 1667.0, 33.0),
    seed(75, 667.0, 13.0),
    seed(100, 333.0, 7.0),
    seed(150, 167.0, 3.0),
    seed(200, 111.0, 2.0),
    seed(500, 37.0, 1.0),
    seed(1000, 18.0, 0.0),
    seed(2000, 9.0, 0.0),
    seed(4000, 4.0, 0.0),
];

/// Published figures next to what the exact formulas give.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeedComparisonRow {
    pub servers: u32,
    /// Published "dumb routing" mean queue time, ms.
    pub published_dumb_ms: f64,
    /// Exact M/M/1 mean wait at lambda/R (random routing), ms.
    pub mm1_mean_wait_ms: f64,
    /// Published "smart routing" mean queue time, ms.
    pub published_smart_ms: f64,
    /// Exact Erlang C M/M/R mean wait (one central queue), ms.
    pub erlang_c_mean_wait_ms: f64,
    /// 1 / (R mu - lambda), ms: the Erlang C mean with P(wait) forced to 1,
    /// which is what the published "smart" column is.
    pub one_over_spare_capacity_ms: f64,
}

/// Per seed R: published dumb, exact M/M/1 at lambda/R, published smart,
/// exact Erlang C M/M/R, and 1/(R mu - lambda), all mean waits in ms.
pub fn seed_comparison_rows() -> Vec<SeedComparisonRow> {
    PUBLISHED_SEED_FIGURES
        .iter()
        .map(|f| {
            let r = f64::from(f.servers);
            SeedComparisonRow {
                servers: f.servers,
                published_dumb_ms: f.dumb_ms,
                mm1_mean_wait_ms: 1000.0 * mmc_mean_wait(1, SEED_LAMBDA / r, SEED_MU),
                published_smart_ms: f.smart_ms,
                erlang_c_mean_wait_ms: 1000.0 * mmc_mean_wait(f.servers, SEED_LAMBDA, SEED_MU),
                one_over_spare_capacity_ms: 1000.0 / (r * SEED_MU - SEED_LAMBDA),
            }
        })
        .collect()
}
