/// Long series drawn at the picture's resolution, as plotting tools draw them: a line keeps, in
/// every pixel column it crosses, the point it enters by, its lowest and its highest point and the
/// point it leaves by, in the order they came. Drawn, that is the same picture as every point
/// (a column is one pixel wide), and every extreme is still there: every stop, every full lock.
/// Spans (a button held, the robot not driving) closer than a pixel are drawn as one.
///
/// Pure and linear: a two-hour recording at 50 Hz (300,000 points) becomes a few thousand.
package enum PixelColumns {
    /// The polyline's points, at most four per pixel column (x already in pixels).
    package static func decimate(_ points: [(Double, Double)]) -> [(Double, Double)] {
        guard points.count > 4 else { return points }
        var out: [(Double, Double)] = []
        out.reserveCapacity(min(points.count, 4096))
        var column = Int.min
        var first = 0, low = 0, high = 0, last = 0
        func flush() {
            guard column != Int.min else { return }
            // first, then the extremes in the order they came, then last; each index once.
            let middle = low <= high ? [low, high] : [high, low]
            var previous = -1
            for index in [first] + middle + [last] where index != previous && index > previous {
                out.append(points[index])
                previous = index
            }
        }
        for (index, point) in points.enumerated() {
            let c = Int(point.0.rounded(.down))
            if c != column {
                flush()
                column = c
                first = index; low = index; high = index
            }
            if point.1 < points[low].1 { low = index }
            if point.1 > points[high].1 { high = index }
            last = index
        }
        flush()
        return out
    }

    /// Spans in pixels, sorted by start, with those less than half a pixel apart (or
    /// overlapping) joined: what a reader sees of them is the same.
    package static func merge(_ spans: [(start: Double, end: Double)]) -> [(start: Double, end: Double)] {
        var out: [(start: Double, end: Double)] = []
        for span in spans.sorted(by: { $0.start < $1.start }) {
            if let last = out.last, span.start - last.end < 0.5 {
                out[out.count - 1].end = max(last.end, span.end)
            } else {
                out.append(span)
            }
        }
        return out
    }
}
