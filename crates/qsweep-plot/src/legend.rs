//! The legend: one strip below the panels, shared by all of them.
//!
//! Why this module exists: the legend explains both the series (one colour and
//! marker per `--by` value) and the drawing conventions that apply to this figure
//! (analytic baselines named by method — thin solid lines for exact ones, dashed
//! for approximations — 95 % CI bars, ▼ for zeros on a log axis, hollow markers
//! for unstable rows).  It sits below the panels so it never covers data, and its
//! entries wrap into as many centred rows as the figure's width needs.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::labels::{baseline_text, BaselineKind};
use super::load::Loaded;
use super::markers::{draw_error_bar, draw_marker, group_color, group_shape, Shape};
use super::panel::{APPROX_DASH, EXACT_DASH};
use super::style::{text_size, Geom, META_GREY};

/// Entries the legend can have besides its groups (see [`LegendKind`]).
const CONVENTION_ENTRIES: usize = 4;

/// Upper bound on the number of legend entries, for sizing the figure before
/// anything is measured (one analytic entry is among the conventions; exact
/// and approximate baselines together take one more).
pub(super) fn max_entries(l: &Loaded) -> usize {
    l.groups.len() + CONVENTION_ENTRIES + l.baselines.len().saturating_sub(1)
}

enum LegendKind {
    /// A `--by` value: its colour, line and (unless the curves have none) marker.
    Group(usize, bool),
    /// Analytic baselines of this kind (thin solid for exact, dashed otherwise).
    Analytic(BaselineKind),
    Ci,
    Zero,
    Unstable,
}

/// The legend's entries, laid out in rows for a given width.
pub(super) struct Legend {
    entries: Vec<(LegendKind, String)>,
    /// `<by column>:` before the first row, or empty.
    title: String,
    title_w: i32,
    /// Per row: (entry index, entry width) and the row's total width.
    rows: Vec<(Vec<(usize, i32)>, i32)>,
    font: TextStyle<'static>,
    sample_w: i32,
    gap: i32,
    spacing: i32,
    row_h: i32,
}

impl Legend {
    /// The legend of `l`, wrapped to fit `width` device pixels.
    pub(super) fn new<DB: DrawingBackend>(
        root: &DrawingArea<DB, Shift>,
        l: &Loaded,
        width: i32,
        g: &Geom,
    ) -> Legend {
        let title = if l.group_title.is_empty() {
            String::new()
        } else {
            format!("{}:", l.group_title)
        };
        let mut legend = Legend {
            entries: entries(l),
            title,
            title_w: 0,
            rows: vec![],
            font: g.font(16.0),
            sample_w: g.px(30.0),
            gap: g.px(7.0),
            spacing: g.px(20.0),
            row_h: g.px(26.0),
        };
        legend.wrap(root, width - g.px(10.0));
        legend
    }

    /// Lay the entries out in rows no wider than `avail` (a row holds at least one
    /// entry); the first row starts with the title.
    fn wrap<DB: DrawingBackend>(&mut self, root: &DrawingArea<DB, Shift>, avail: i32) {
        self.title_w = if self.title.is_empty() {
            0
        } else {
            text_size(root, &self.title, &self.font).0 + self.gap * 2
        };
        let mut rows: Vec<(Vec<(usize, i32)>, i32)> = vec![(vec![], self.title_w)];
        for (i, (_, label)) in self.entries.iter().enumerate() {
            let ew = self.sample_w + self.gap + text_size(root, label, &self.font).0;
            let (row, row_w) = rows.last_mut().expect("at least one row");
            let need = if row.is_empty() {
                ew
            } else {
                ew + self.spacing
            };
            if *row_w + need > avail && !row.is_empty() {
                rows.push((vec![(i, ew)], ew));
            } else {
                row.push((i, ew));
                *row_w += need;
            }
        }
        self.rows = rows;
    }

    /// Height of the legend strip in device pixels (0 without entries).
    pub(super) fn height(&self, g: &Geom) -> i32 {
        if self.entries.is_empty() {
            0
        } else {
            self.row_h * self.rows.len() as i32 + g.px(10.0)
        }
    }

    /// Draw the rows, centred in `area`: the samples on `root` (in absolute
    /// pixels), the labels in `area`.
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        area: &DrawingArea<DB, Shift>,
        g: &Geom,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let label_style = self.font.pos(Pos::new(HPos::Left, VPos::Center));
        let (lw, _) = area.dim_in_pixel();
        for (r, (row, row_w)) in self.rows.iter().enumerate() {
            let mut x = (lw as i32 - row_w) / 2;
            let cy = g.px(8.0) + self.row_h * r as i32 + self.row_h / 2;
            if r == 0 && !self.title.is_empty() && !self.entries.is_empty() {
                area.draw_text(&self.title, &label_style, (x, cy))?;
                x += self.title_w;
            }
            for (k, &(i, ew)) in row.iter().enumerate() {
                if k > 0 {
                    x += self.spacing;
                }
                let (kind, label) = &self.entries[i];
                let (ox, oy) = area.get_base_pixel();
                let sample = (ox + x, ox + x + self.sample_w, oy + cy);
                draw_sample(root, g, kind, sample)?;
                area.draw_text(label, &label_style, (x + self.sample_w + self.gap, cy))?;
                x += ew;
            }
        }
        Ok(())
    }
}

/// One entry per `--by` value, then one per convention the figure uses.
fn entries(l: &Loaded) -> Vec<(LegendKind, String)> {
    let any_ci = l
        .summary
        .series
        .iter()
        .any(|s| s.points.iter().any(|p| p.2.is_some()));
    let any_unstable = l.meta.iter().any(|m| m.stable.iter().any(|s| !s));
    let mut entries: Vec<(LegendKind, String)> = Vec::new();
    for (i, name) in l.groups.iter().enumerate() {
        entries.push((LegendKind::Group(i, !l.lines_only), name.clone()));
    }
    for (kind, names) in &l.baselines {
        entries.push((LegendKind::Analytic(*kind), baseline_text(*kind, names)));
    }
    if any_ci {
        entries.push((LegendKind::Ci, "95% CI".to_string()));
    }
    if l.summary.dropped_zero > 0 {
        entries.push((LegendKind::Zero, "y = 0 (off log axis)".to_string()));
    }
    if any_unstable {
        entries.push((LegendKind::Unstable, "unstable (ρ ≥ 1)".to_string()));
    }
    entries
}

/// The sample of an entry between `sx0` and `sx1` on the row's centre line `sy`.
fn draw_sample<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    kind: &LegendKind,
    (sx0, sx1, sy): (i32, i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let mid = (sx0 + sx1) / 2;
    match kind {
        LegendKind::Group(gi, marker) => {
            let c = group_color(*gi);
            root.draw(&PathElement::new(
                vec![(sx0, sy), (sx1, sy)],
                c.stroke_width(g.w(2.0)),
            ))?;
            if *marker {
                draw_marker(root, g, (mid, sy), group_shape(*gi), c, true)?;
            }
        }
        LegendKind::Analytic(BaselineKind::Exact) => {
            root.draw(&DashedPathElement::new(
                vec![(sx0, sy), (sx1, sy)],
                g.px(EXACT_DASH.0),
                g.px(EXACT_DASH.1),
                META_GREY.stroke_width(g.w(1.5)),
            ))?;
        }
        LegendKind::Analytic(_) => {
            root.draw(&DashedPathElement::new(
                vec![(sx0, sy), (sx1, sy)],
                g.px(APPROX_DASH.0),
                g.px(APPROX_DASH.1),
                META_GREY.stroke_width(g.w(2.0)),
            ))?;
        }
        LegendKind::Ci => {
            let ends = (sy - g.px(8.0), sy + g.px(8.0));
            draw_error_bar(root, g, mid, ends, META_GREY, true)?;
            draw_marker(root, g, (mid, sy), Shape::Circle, META_GREY, true)?;
        }
        LegendKind::Zero => {
            draw_marker(root, g, (mid, sy + g.px(5.0)), Shape::Down, META_GREY, true)?;
            root.draw(&PathElement::new(
                vec![
                    (sx0 + g.px(4.0), sy + g.px(6.0)),
                    (sx1 - g.px(4.0), sy + g.px(6.0)),
                ],
                META_GREY.stroke_width(g.w(1.0)),
            ))?;
        }
        LegendKind::Unstable => {
            draw_marker(root, g, (mid, sy), Shape::Circle, META_GREY, false)?;
        }
    }
    Ok(())
}
