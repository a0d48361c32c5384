import EventGraph

/// `--at SEQ` and `--at-commit N`, the two ways a command is told a point in the past.
///
/// Both name a state some commit left: `--at-commit N` the state after commit N, `--at SEQ`
/// the state after event SEQ, which must be the last event of its commit; an event inside
/// a commit is refused with the commit that holds it and the options that name its ends.
enum TimePoint {
  case event(UInt64)
  case commit(UInt64)

  static let options = [
    OptionSpec(
      "at", valueName: "SEQ",
      help: "The state after event SEQ, which must end a commit (0: before the first commit)."),
    OptionSpec("at-commit", valueName: "N", help: "The state after commit N (0: before the first commit)."),
  ]

  /// The point the options give, `nil` for neither; read before the store is opened, so a
  /// wrong command line is a usage error whatever the store.
  static func parse(_ a: ParsedArguments) throws -> TimePoint? {
    let at = try a.sequence("at")
    let commit = try a.sequence("at-commit")
    if at != nil && commit != nil { throw ToolError.usage("give --at or --at-commit, not both") }
    return at.map(TimePoint.event) ?? commit.map(TimePoint.commit)
  }

  /// The point's sequence, checked against the store's log.
  func sequence(in store: EventStore) throws -> UInt64 {
    try store.read { s in try sequence(in: s) }
  }

  /// The point's sequence, checked against the log of the snapshot's version.
  func sequence(in s: Snapshot) throws -> UInt64 {
    switch self {
    case .commit(let n): return try s.lastSequence(ofCommit: n)
    case .event(let at):
      do {
        return try s.commitEnd(at: at)
      } catch let e as StoreError where e.code == .sequenceInsideCommit {
        guard case .insideCommit(_, let c, let first, let last) = e.context else { throw e }
        throw ToolError.failed(
          "--at \(at): \(e); for the state after commit \(c) give --at-commit \(c) (or --at \(last)), before it --at-commit \(c - 1) (or --at \(first - 1))"
        )
      }
    }
  }
}
