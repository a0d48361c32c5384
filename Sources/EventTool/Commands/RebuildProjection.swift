import EventGraph

/// `eventtool rebuild STORE --projection NAME`: rebuilds one projection of one's own.
///
/// It empties the projection and replays the log into it. The tool knows only the
/// projections it was built with (`EventTool(projections:)`); a service's own tool
/// registers its own.
enum RebuildProjection {
  static func run(_ name: String, projections: [any Projection], store path: String, _ io: ToolIO) throws {
    guard let projection = projections.first(where: { $0.name == name }) else {
      let known = projections.map(\.name).joined(separator: ", ")
      throw ToolError.failed(
        "this tool knows no projection '\(name)' (it knows: \(known)); build your own tool with EventTool(projections:)"
      )
    }
    let store = try openStore(path, writing: true)
    let total = Int(try store.lastSequence())
    let bar = io.progress("rebuild \(name)", total: total)
    let start = ContinuousClock.now
    let (commits, events) = try store.rebuild(projection: projection) { bar.update($0) }
    bar.finish()
    io.print("rebuilt projection \(name) from \(commits) commits, \(events) events in \(start.duration(to: .now))")
  }
}
