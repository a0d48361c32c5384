/// Text in Prometheus' exposition format (version 0.0.4), written family by family: what
/// ``StoreMetrics/prometheusText(includingProcess:)`` and the replication module's
/// statuses are rendered with, and what a service may add its own families to before it
/// serves the text.
///
/// ```swift
/// var text = PrometheusExposition()
/// text.gauge("orders_open", help: "Orders not yet shipped.", 42)
/// let body = try store.metrics().prometheusText() + text.text
/// ```
public struct PrometheusExposition: Sendable {
  /// The text so far.
  public private(set) var text = ""

  /// An empty exposition.
  public init() {}

  /// A gauge family of one sample per label set (`labels` as `name="value"` pairs, in order).
  public mutating func gauge(_ name: String, help: String, _ samples: [(labels: [(String, String)], value: Double)]) {
    family(name, "gauge", help)
    for s in samples { sample(name, s.labels, Self.number(s.value)) }
  }

  /// A gauge family of one unlabelled sample.
  public mutating func gauge(_ name: String, help: String, _ value: Double) {
    gauge(name, help: help, [([], value)])
  }

  /// A counter family of one unlabelled sample (`name` should end in `_total`).
  public mutating func counter(_ name: String, help: String, _ value: UInt64) {
    family(name, "counter", help)
    sample(name, [], "\(value)")
  }

  /// A histogram family: cumulative counts per upper bound, then `+Inf`, the sum, the count.
  public mutating func histogram(_ name: String, help: String, _ h: StoreMetrics.Histogram) {
    family(name, "histogram", help)
    for (bound, count) in zip(h.upperBounds, h.cumulativeCounts) {
      sample(name + "_bucket", [("le", Self.number(bound))], "\(count)")
    }
    sample(name + "_bucket", [("le", "+Inf")], "\(h.count)")
    sample(name + "_sum", [], Self.number(h.sum))
    sample(name + "_count", [], "\(h.count)")
  }

  private mutating func family(_ name: String, _ type: String, _ help: String) {
    text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
  }

  private mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
    text += name
    if !labels.isEmpty { text += "{" + labels.map { "\($0.0)=\"\(Self.label($0.1))\"" }.joined(separator: ",") + "}" }
    text += " " + value + "\n"
  }

  /// A number as the exposition format writes one (`1e-05`, `0.25`, `10`, `NaN`, `+Inf`).
  static func number(_ d: Double) -> String {
    if d.isNaN { return "NaN" }
    if d.isInfinite { return d > 0 ? "+Inf" : "-Inf" }
    if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
    return "\(d)"
  }

  /// A label value with backslash, quote and line feed escaped, as the format requires.
  static func label(_ s: String) -> String {
    s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
      .replacingOccurrences(of: "\n", with: "\\n")
  }
}
