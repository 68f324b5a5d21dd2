import DriveRecord

/// Draws a ``PlotModel`` as a standalone SVG (no fonts or scripts fetched): four panels over one
/// time axis — tilt, buttons as bands, wheel speeds, round-trip time and loss — and, when the
/// recording has the robot's sensor readings, a fifth: sensors 1–4 as lines and the switch
/// pressed as a band; every event
/// as a dashed line across them, labelled with its time, and a legend. Pure text out.
package enum PlotSVG {
    static let width = 1200.0
    static let left = 90.0
    static let right = 195.0
    static let colours: [PlotModel.Kind: String] = [
        .failsafe: "#d62728", .owned: "#e6550d", .teacher: "#7b3294", .board: "#8c510a", .note: "#666666",
    ]
    static let tiltColour = "#1f77b4", leftColour = "#1b9e77", rightColour = "#d95f02"
    static let rttColour = "#e7298a", lossColour = "#555555"
    /// The fills of a button held, the robot not driving, the switch pressed.
    package static let bandColour = "#4c72b0", heldColour = "#f6d5d5", switchColour = "#c7e9c0"
    static let sensorColours = ["#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd"]

    /// `atPixels: false` draws every point and span as it is (for comparing; a long recording's
    /// picture is then tens of megabytes).
    package static func render(_ model: PlotModel, title: String, atPixels: Bool = true) -> String {
        let rows = max(model.buttons.count, 1)
        let plotWidth = width - left - right
        var y = 70.0
        let eventLabels = min(model.events.count, 4)
        let labelArea = Double(max(eventLabels, 1)) * 15 + 10
        y += labelArea
        let tiltPanel = (top: y, height: 150.0); y += 150 + 40
        let bandPanel = (top: y, height: Double(rows) * 20); y += Double(rows) * 20 + 40
        let wheelPanel = (top: y, height: 160.0); y += 160 + 40
        let linkPanel = (top: y, height: 110.0); y += 110 + 40
        let hasSensors = model.sensors.contains { !$0.isEmpty }
        let sensorPanel = (top: y, height: 120.0)
        if hasSensors { y += 120 + 40 }
        y += 15
        let height = y
        let panelsTop = tiltPanel.top, panelsBottom = hasSensors ? sensorPanel.top + sensorPanel.height : linkPanel.top + linkPanel.height

        let span = model.end - model.start
        func x(_ t: Double) -> Double { left + (t - model.start) / span * plotWidth }
        var svg = Canvas(atPixels: atPixels)
        // A span at least a pixel wide (a tap must show), at the precision it is written.
        func spans(_ s: [(start: Double, end: Double)]) -> [(start: Double, end: Double)] {
            let inPixels = s.map { span -> (start: Double, end: Double) in
                let start = Canvas.shown(x(span.start))
                return (start, max(Canvas.shown(x(span.end)), start + 1))
            }
            return atPixels ? PixelColumns.merge(inPixels) : inPixels
        }
        svg.open(width: width, height: height)
        svg.text(left, 28, escape(title), size: 18, weight: "bold")
        let kind = model.header.kind == .blackBox ? "black box" : "drive"
        let subtitle = "\(kind) · input \(model.header.input.isEmpty ? "?" : model.header.input)"
            + (model.header.receiver.isEmpty ? "" : " · receiver \(model.header.receiver)")
            + " · started \(RecordTime.iso8601(unixMillis: model.header.startUnixMillis)) · \(fmt(span)) s shown"
        svg.text(left, 50, escape(subtitle), size: 12, colour: "#444")

        // Time grid and axis.
        let tStep = niceStep(span, count: 10)
        var tick = (model.start / tStep).rounded(.up) * tStep
        while tick <= model.end + tStep * 1e-6 {
            let px = x(tick)
            svg.line(px, panelsTop, px, panelsBottom, colour: "#e6e6e6")
            svg.text(px, panelsBottom + 16, fmt(tick), size: 11, anchor: "middle")
            tick += tStep
        }
        svg.text(left + plotWidth / 2, panelsBottom + 36, "time since the recording started (s)", size: 12, anchor: "middle")

        // Tilt.
        panel(&svg, tiltPanel, title: "tilt (degrees, + = right)", range: -90...90, ticks: [-90, -45, 0, 45, 90])
        func ys(_ p: (top: Double, height: Double), _ r: ClosedRange<Double>) -> (Double) -> Double {
            { v in p.top + (r.upperBound - min(max(v, r.lowerBound), r.upperBound)) / (r.upperBound - r.lowerBound) * p.height }
        }
        svg.steps(model.tilt, end: model.end, x: x, y: ys(tiltPanel, -90...90), colour: tiltColour)

        // Buttons.
        svg.rect(left, bandPanel.top, plotWidth, bandPanel.height, fill: "none", stroke: "#999")
        svg.text(left, bandPanel.top - 8, "buttons held", size: 12, weight: "bold")
        if model.buttons.isEmpty {
            svg.text(left + 8, bandPanel.top + 14, "(none pressed)", size: 11, colour: "#666")
        }
        for (i, band) in model.buttons.enumerated() {
            let top = bandPanel.top + Double(i) * 20
            svg.text(left - 8, top + 14, band.name, size: 11, anchor: "end")
            for span in spans(band.intervals) {
                svg.rect(span.start, top + 3, span.end - span.start, 14, fill: bandColour, stroke: nil)
            }
        }

        // Wheels, on a shade where the robot did not drive them.
        for span in spans(model.held) {
            svg.rect(span.start, wheelPanel.top, span.end - span.start, wheelPanel.height, fill: heldColour, stroke: nil)
        }
        let s = Double(max(model.speed, 1))
        let wheelRange = -s * 1.1...s * 1.1
        panel(&svg, wheelPanel, title: "wheel speeds the mapping makes (speed units, + = forward; full = \(model.speed))",
              range: wheelRange, ticks: [-s, -s / 2, 0, s / 2, s])
        svg.steps(model.left, end: model.end, x: x, y: ys(wheelPanel, wheelRange), colour: leftColour)
        svg.steps(model.right, end: model.end, x: x, y: ys(wheelPanel, wheelRange), colour: rightColour, dash: "6 3")

        // Link.
        let rttMax = max(niceCeil(model.roundTrip.map(\.value).max() ?? 1), 1)
        panel(&svg, linkPanel, title: "link: round-trip time (ms, left) and loss (%, right)", range: 0...rttMax,
              ticks: [0, rttMax / 2, rttMax])
        for v in [0.0, 50, 100] {
            svg.text(left + plotWidth + 6, ys(linkPanel, 0...100)(v) + 4, "\(Int(v)) %", size: 11, colour: lossColour)
        }
        if model.roundTrip.isEmpty && model.loss.isEmpty {
            svg.text(left + 8, linkPanel.top + 16, "(no link measurements in this recording)", size: 11, colour: "#666")
        }
        svg.polyline(model.roundTrip.map { (x($0.t), ys(linkPanel, 0...rttMax)($0.value)) }, colour: rttColour, dots: true)
        svg.steps(model.loss, end: model.end, x: x, y: ys(linkPanel, 0...100), colour: lossColour, dash: "2 2")

        // Sensors: the switch pressed as a band behind, sensors 1–4 as steps (raw 0…255).
        if hasSensors {
            for span in spans(model.switchPressed) {
                svg.rect(span.start, sensorPanel.top, span.end - span.start, sensorPanel.height, fill: switchColour, stroke: nil)
            }
            panel(&svg, sensorPanel, title: "the robot's sensors 1–4 (raw 0–255); switch pressed shaded", range: 0...255,
                  ticks: [0, 128, 255])
            for (i, points) in model.sensors.enumerated() {
                svg.steps(points, end: model.end, x: x, y: ys(sensorPanel, 0...255), colour: sensorColours[i])
            }
        }

        // Events: a dashed line across every panel, the label (with its time) above, in rows.
        // Events of one kind in one pixel column are one line, labelled by the first with the
        // count of the others.
        for (i, group) in (atPixels ? eventColumns(model.events, x: x) : model.events.map { (first: $0, count: 1) }).enumerated() {
            let event = group.first
            let px = x(event.t)
            let colour = colours[event.kind] ?? "#666"
            let row = Double(i % max(eventLabels, 1))
            let labelY = 70 + row * 15 + 10
            svg.line(px, labelY + 3, px, panelsBottom, colour: colour, dash: "4 3", width: 1.2)
            let anchor = px > left + plotWidth * 0.7 ? "end" : "start"
            let more = group.count > 1 ? " (+\(group.count - 1) more)" : ""
            svg.text(px + (anchor == "end" ? -3 : 3), labelY, escape("\(event.label) @ \(fmt(event.t)) s\(more)"), size: 11, colour: colour, anchor: anchor)
        }

        // Legend.
        var ly = tiltPanel.top
        let lx = left + plotWidth + 50
        svg.text(lx, ly - 8, "legend", size: 12, weight: "bold")
        for (label, colour, dash) in [("tilt", tiltColour, nil), ("left wheel", leftColour, nil), ("right wheel", rightColour, "6 3"),
                                      ("round trip", rttColour, nil), ("loss", lossColour, "2 2"), ("button held", bandColour, nil),
                                      ("robot not driving", heldColour, nil)] as [(String, String, String?)]
            + (hasSensors ? (0..<4).map { ("sensor \($0 + 1)", sensorColours[$0], nil) } + [("switch pressed", switchColour, nil)] : []) {
            if label == "button held" || label == "robot not driving" || label == "switch pressed" {
                svg.rect(lx, ly + 2, 22, 10, fill: colour, stroke: nil)
            } else {
                svg.line(lx, ly + 7, lx + 22, ly + 7, colour: colour, dash: dash, width: 2)
            }
            svg.text(lx + 28, ly + 11, label, size: 11)
            ly += 18
        }
        ly += 8
        for kind in PlotModel.Kind.allCases {
            let colour = colours[kind] ?? "#666"
            svg.line(lx + 11, ly, lx + 11, ly + 14, colour: colour, dash: "4 3", width: 1.5)
            let name = switch kind {
            case .failsafe: "failsafe"
            case .owned: "owner / owned"
            case .teacher: "teacher stop"
            case .board: "board link"
            case .note: "other event"
            }
            svg.text(lx + 28, ly + 11, name, size: 11)
            ly += 18
        }
        svg.close()
        return svg.output
    }

    /// The events, those of one kind that fall in one pixel column (in a row) as one group.
    static func eventColumns(_ events: [PlotModel.Event], x: (Double) -> Double) -> [(first: PlotModel.Event, count: Int)] {
        var groups: [(first: PlotModel.Event, count: Int)] = []
        var columns: [PlotModel.Kind: (column: Int, group: Int)] = [:]
        for event in events {
            let column = Int(x(event.t).rounded(.down))
            if let seen = columns[event.kind], seen.column == column {
                groups[seen.group].count += 1
            } else {
                columns[event.kind] = (column, groups.count)
                groups.append((event, 1))
            }
        }
        return groups
    }

    static func panel(_ svg: inout Canvas, _ p: (top: Double, height: Double), title: String, range: ClosedRange<Double>,
                      ticks: [Double]) {
        let plotWidth = width - left - right
        svg.rect(left, p.top, plotWidth, p.height, fill: "none", stroke: "#999")
        svg.text(left, p.top - 8, escape(title), size: 12, weight: "bold")
        for v in ticks {
            let y = p.top + (range.upperBound - v) / (range.upperBound - range.lowerBound) * p.height
            svg.line(left, y, left + plotWidth, y, colour: v == 0 ? "#bbbbbb" : "#eeeeee")
            svg.text(left - 8, y + 4, fmt(v), size: 11, anchor: "end")
        }
    }

    /// 1, 2 or 5 × 10^k, about `count` steps over `span`.
    static func niceStep(_ span: Double, count: Double) -> Double {
        guard span > 0 else { return 1 }
        let raw = span / count
        var p = 1.0
        while p * 10 <= raw { p *= 10 }
        while p > raw { p /= 10 }
        for m in [1.0, 2, 5, 10] where p * m >= raw { return p * m }
        return p * 10
    }

    static func niceCeil(_ v: Double) -> Double {
        let step = niceStep(v, count: 2)
        return (v / step).rounded(.up) * step
    }

    static func fmt(_ v: Double) -> String { RecordNumber.plain(v, places: v.magnitude >= 100 ? 0 : v.magnitude >= 10 ? 1 : 2) }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}

/// SVG elements as text.
struct Canvas {
    var output = ""
    /// Lines drawn at the picture's resolution (``PixelColumns``).
    var atPixels = true

    mutating func open(width: Double, height: Double) {
        output += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        output += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(width))\" height=\"\(n(height))\" viewBox=\"0 0 \(n(width)) \(n(height))\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n"
        output += "<rect x=\"0\" y=\"0\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"white\"/>\n"
    }

    mutating func close() { output += "</svg>\n" }

    mutating func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, colour: String, dash: String? = nil, width: Double = 1) {
        output += "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\" stroke=\"\(colour)\" stroke-width=\"\(n(width))\""
            + (dash.map { " stroke-dasharray=\"\($0)\"" } ?? "") + "/>\n"
    }

    mutating func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double, fill: String, stroke: String?) {
        output += "<rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(w))\" height=\"\(n(h))\" fill=\"\(fill)\""
            + (stroke.map { " stroke=\"\($0)\"" } ?? "") + "/>\n"
    }

    mutating func text(_ x: Double, _ y: Double, _ content: String, size: Double, colour: String = "#222", weight: String? = nil,
                       anchor: String = "start") {
        output += "<text x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(n(size))\" fill=\"\(colour)\" text-anchor=\"\(anchor)\""
            + (weight.map { " font-weight=\"\($0)\"" } ?? "") + ">\(content)</text>\n"
    }

    /// The line through `points` (x in pixels) at the picture's resolution (``PixelColumns``);
    /// with `dots`, a dot on each point while there are no more of them than pixel columns
    /// (more would be a smear, and a large file).
    mutating func polyline(_ all: [(Double, Double)], colour: String, dash: String? = nil, dots: Bool = false) {
        guard !all.isEmpty else { return }
        // Decimated as written (a tenth of a pixel), so a point's column is the one it is drawn in.
        let shown: [(Double, Double)] = all.map { (Canvas.shown($0.0), Canvas.shown($0.1)) }
        let points: [(Double, Double)] = atPixels ? PixelColumns.decimate(shown) : shown
        let columns = Int(PlotSVG.width - PlotSVG.left - PlotSVG.right)
        let dots = dots && (!atPixels || all.count <= columns)
        output += "<polyline fill=\"none\" stroke=\"\(colour)\" stroke-width=\"1.8\"" + (dash.map { " stroke-dasharray=\"\($0)\"" } ?? "")
            + " points=\"" + points.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " ") + "\"/>\n"
        if dots { for p in points { output += "<circle cx=\"\(n(p.0))\" cy=\"\(n(p.1))\" r=\"2.2\" fill=\"\(colour)\"/>\n" } }
    }

    /// A step line: each value holds until the next point, the last until `end`.
    mutating func steps(_ points: [PlotModel.Point], end: Double, x: (Double) -> Double, y: (Double) -> Double, colour: String,
                        dash: String? = nil) {
        var out: [(Double, Double)] = []
        for (i, p) in points.enumerated() {
            if i > 0 { out.append((x(p.t), y(points[i - 1].value))) }
            out.append((x(p.t), y(p.value)))
        }
        if let last = points.last { out.append((x(end), y(last.value))) }
        polyline(out, colour: colour, dash: dash)
    }

    func n(_ v: Double) -> String { RecordNumber.plain(v, places: 1) }
    /// `v` as ``n(_:)`` writes it (to a tenth, halves away from zero).
    static func shown(_ v: Double) -> Double { (v * 10).rounded() / 10 }
}
