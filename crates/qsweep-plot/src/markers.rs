//! How one data point looks: the colour and marker shape of each series, error
//! bars, and the ▼ markers of values that have no place on a log y axis.
//!
//! Why this module exists: a point must stay identifiable in greyscale and for
//! colour-blind readers, so every `--by` value gets a colour *and* a shape, chosen
//! here once for the panels and the legend alike.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::Geom;

/// Okabe–Ito colour-blind-safe palette (yellow replaced by wine, readable on white).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(136, 34, 85),
];
/// Marker "radius" in logical pixels.
const MARKER_R: f64 = 4.2;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
    Plus,
    Pentagon,
    /// Reserved for values clamped to the bottom of a log axis.
    Down,
}

const SHAPES: [Shape; 7] = [
    Shape::Circle,
    Shape::Square,
    Shape::Triangle,
    Shape::Diamond,
    Shape::Cross,
    Shape::Plus,
    Shape::Pentagon,
];

/// Colour of the `g`-th `--by` value (in legend order).
pub(super) fn group_color(g: usize) -> RGBColor {
    PALETTE[g % PALETTE.len()]
}

/// Marker shape of the `g`-th `--by` value (in legend order).
pub(super) fn group_shape(g: usize) -> Shape {
    // Shapes advance with colours but on a different cycle length so that
    // (colour, shape) pairs stay unique for 56 groups.
    SHAPES[(g + g / PALETTE.len()) % SHAPES.len()]
}

/// A vertical error bar from `top` to `low` at `x`, with a cap on top and, when
/// `cap_low`, at the bottom (a bar running off a log axis has no lower end).
pub(super) fn draw_error_bar<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    x: i32,
    (top, low): (i32, i32),
    color: RGBColor,
    cap_low: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = color.stroke_width(g.w(1.2));
    let cap = g.px(3.5);
    root.draw(&PathElement::new(vec![(x, top), (x, low)], style))?;
    root.draw(&PathElement::new(
        vec![(x - cap, top), (x + cap, top)],
        style,
    ))?;
    if cap_low {
        root.draw(&PathElement::new(
            vec![(x - cap, low), (x + cap, low)],
            style,
        ))?;
    }
    Ok(())
}

/// A marker of `shape` centred on `centre` (the ▼ of [`Shape::Down`] has its tip
/// there); hollow markers are filled white so that lines do not show through.
pub(super) fn draw_marker<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    centre: (i32, i32),
    shape: Shape,
    color: RGBColor,
    filled: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    // Corners in units of the marker radius, relative to the centre.
    let corners: Vec<(f64, f64)> = match shape {
        Shape::Circle => return draw_circle(root, g, centre, color, filled),
        Shape::Cross => {
            let strokes = [[(-0.9, -0.9), (0.9, 0.9)], [(-0.9, 0.9), (0.9, -0.9)]];
            return draw_strokes(root, g, centre, color, &strokes);
        }
        Shape::Plus => {
            let strokes = [[(-1.1, 0.0), (1.1, 0.0)], [(0.0, -1.1), (0.0, 1.1)]];
            return draw_strokes(root, g, centre, color, &strokes);
        }
        Shape::Square => vec![(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)],
        Shape::Triangle => vec![(0.0, -1.2), (1.1, 0.75), (-1.1, 0.75)],
        Shape::Diamond => vec![(0.0, -1.25), (1.05, 0.0), (0.0, 1.25), (-1.05, 0.0)],
        Shape::Pentagon => (0..5)
            .map(|i| {
                let a = -std::f64::consts::FRAC_PI_2 + i as f64 * 2.0 * std::f64::consts::PI / 5.0;
                (1.1 * a.cos(), 1.1 * a.sin())
            })
            .collect(),
        // Tip on the centre: the marker sits above the point it marks.
        Shape::Down => vec![(-1.1, -1.9), (1.1, -1.9), (0.0, 0.0)],
    };
    let pts = to_device(g, centre, &corners);
    if filled {
        root.draw(&Polygon::new(pts.clone(), color.filled()))?;
    } else {
        root.draw(&Polygon::new(pts.clone(), WHITE.filled()))?;
    }
    let mut closed = pts;
    closed.push(closed[0]);
    root.draw(&PathElement::new(closed, outline(g, color)))?;
    Ok(())
}

/// Stroke of marker outlines.
fn outline(g: &Geom, color: RGBColor) -> ShapeStyle {
    color.stroke_width(g.w(1.5))
}

/// Device pixels of points given in marker radii around `centre`.
fn to_device(g: &Geom, (x, y): (i32, i32), pts: &[(f64, f64)]) -> Vec<(i32, i32)> {
    let r = MARKER_R * g.s;
    let (xf, yf) = (x as f64, y as f64);
    pts.iter()
        .map(|(dx, dy)| ((xf + dx * r).round() as i32, (yf + dy * r).round() as i32))
        .collect()
}

fn draw_circle<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    centre: (i32, i32),
    color: RGBColor,
    filled: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let r = (MARKER_R * g.s).round() as i32;
    if filled {
        root.draw(&Circle::new(centre, r, color.filled()))?;
    } else {
        root.draw(&Circle::new(centre, r, WHITE.filled()))?;
        root.draw(&Circle::new(centre, r, outline(g, color)))?;
    }
    Ok(())
}

/// Markers made of strokes only (×, +): the same whether filled or hollow.
fn draw_strokes<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    centre: (i32, i32),
    color: RGBColor,
    strokes: &[[(f64, f64); 2]],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    for s in strokes {
        root.draw(&PathElement::new(
            to_device(g, centre, s),
            color.stroke_width(g.w(2.0)),
        ))?;
    }
    Ok(())
}

/// A value ≤ 0 on a log y axis, to be drawn as ▼ on the bottom edge.
pub(super) struct Clamp {
    pub(super) x: i32,
    pub(super) group: usize,
    pub(super) filled: bool,
    pub(super) analytic: bool,
}

/// Draw the ▼ markers of zero values side by side (dodged) where several series
/// have one at the same x; an analytic zero is hollow and omitted where the
/// measured series of the same group is zero there too.
pub(super) fn draw_clamped<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Geom,
    clamps: &[Clamp],
    bottom: i32,
    (left, right): (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let shown: Vec<&Clamp> = clamps
        .iter()
        .filter(|c| {
            !c.analytic
                || !clamps
                    .iter()
                    .any(|d| !d.analytic && d.group == c.group && d.x == c.x)
        })
        .collect();
    let mut xs: Vec<i32> = shown.iter().map(|c| c.x).collect();
    xs.sort_unstable();
    xs.dedup();
    let step = 2.5 * MARKER_R * g.s;
    for x in xs {
        let mut here: Vec<&Clamp> = shown.iter().copied().filter(|c| c.x == x).collect();
        here.sort_by_key(|c| (c.group, c.analytic));
        let n = here.len() as f64;
        // Keep the whole row inside the frame.
        let half = (n - 1.0) / 2.0 * step + 1.3 * MARKER_R * g.s;
        let centre = (x as f64).max(left as f64 + half).min(right as f64 - half);
        for (j, c) in here.iter().enumerate() {
            let px = (centre + (j as f64 - (n - 1.0) / 2.0) * step).round() as i32;
            draw_marker(
                root,
                g,
                (px, bottom),
                Shape::Down,
                group_color(c.group),
                c.filled,
            )?;
        }
    }
    Ok(())
}
