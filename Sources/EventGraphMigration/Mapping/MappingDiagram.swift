import EventGraph
internal import EventGraphText

extension CompiledMapping {
  /// DOT of both model versions side by side, with an edge per entity mapping (inferred ones
  /// dashed), labelled with its name, filter, split keys or policy.
  public func dot() -> String {
    let s = sourceModel
    let d = destinationModel
    var out = "digraph \(DOT.quote("\(s.name) v\(s.version) to v\(d.version)")) {\n  rankdir=LR;\n  compound=true;\n"
    out += "  node [shape=record, fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n"
    out +=
      "  subgraph cluster_source {\n    label=\(DOT.quote("v\(s.version)"));\n"
      + s.dotBody(prefix: "v\(s.version).", indent: "    ") + "  }\n"
    out +=
      "  subgraph cluster_destination {\n    label=\(DOT.quote("v\(d.version)"));\n"
      + d.dotBody(prefix: "v\(d.version).", indent: "    ") + "  }\n"
    for m in mappings {
      guard let from = m.source, let to = m.destination else { continue }
      var label = m.name
      if let f = m.filter { label += "\\nfilter: \(f)" }
      if !m.instances.isEmpty { label += "\\nsplit: " + m.instances.map(\.key).joined(separator: ", ") }
      if let p = m.policyName { label += "\\npolicy: \(p)" }
      let style = m.isInferred ? "dashed" : "bold"
      out +=
        "  \(DOT.quote("v\(s.version).\(from.name)")) -> \(DOT.quote("v\(d.version).\(to.name)")) [label=\(DOT.quote(label)), style=\(style), color=\"#3060c0\", fontcolor=\"#3060c0\"];\n"
    }
    return out + "}\n"
  }
}
