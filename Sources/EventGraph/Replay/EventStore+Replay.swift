import Foundation
internal import LMDB

/// What ``EventStore/verify(progress:)`` found.
public struct VerifyReport: Sendable, Hashable {
  public var commits = 0
  public var events = 0
  /// Each problem names where it is: a log sequence, a database and key.
  public var problems: [String] = []
  /// What is not damage but should be put right, a sentence each.
  ///
  /// The store's directory or files open to others (``StoreStatistics/openToOthers``). They
  /// do not make the verification fail.
  public var warnings: [String] = []
  public var isOK: Bool { problems.isEmpty }
}

extension EventStore {
  /// Whether a rebuild was interrupted: the projections are incomplete until ``rebuild(progress:)``
  /// runs again.
  ///
  /// Writes are refused meanwhile.
  public var needsRebuild: Bool {
    (try? env.read { try $0.contains(dbs.meta, key: MetaKey.rebuilding) }) ?? false
  }

  /// Rebuilds every projection by replaying the log, in batches of commits.
  ///
  /// - Returns: the commits and events replayed.
  @discardableResult
  public func rebuild(progress: (Int) -> Void = { _ in }) throws -> (commits: Int, events: Int) {
    if options.readOnly { throw StoreError.readOnly(path: path) }
    // The replay writes through the commit writer, which reports LMDB's errors as the store's.
    return try Replay.rebuild(commits, progress: progress)
  }

  /// Checks the store without changing it: every commit's checksum and place in the log,
  /// and that replaying the log into scratch databases gives the stored projections,
  /// byte for byte.
  public func verify(progress: (Int) -> Void = { _ in }) throws -> VerifyReport {
    return try StoreError.reportingStorage(path: path) {
      var report = VerifyReport()
      report.warnings = StoreFiles.openToOthers(at: path)
      let scratch = try ScratchStore(model: model, mapSize: env.info.mapSize, purpose: "verify")
      defer { scratch.remove() }
      let (scratchEnv, scratchDBs) = (scratch.env, scratch.dbs)
      let source = ReadHandle(try env.beginRead())
      defer { source.end() }
      if try source.contains(dbs.meta, key: MetaKey.rebuilding) {
        report.problems.append("an interrupted rebuild left the projections incomplete: run rebuild")
      }
      do {
        let counts = try Replay.run(
          into: CommitWriter(env: scratchEnv, dbs: scratchDBs, model: model, path: scratch.path),
          readLog: { _, from, visit in
            try source.forEach(dbs.log, from: StoreKey.sequence(from)) { k, v in
              try visit(KeyField.u64(k, at: 0) ?? 0, v)
            }
          }, progress: progress)
        report.commits = counts.commits
        report.events = counts.events
      } catch let e as StoreError {
        report.problems.append("\(e)")
        return report
      }
      // The snapshot keeps the scratch environment open (a transaction holds its environment).
      let replayed = ReadHandle(try scratchEnv.beginRead())
      defer { replayed.end() }
      for ((name, stored), (_, fresh)) in zip(dbs.projections, scratchDBs.projections) {
        do {
          if let problem = try Self.firstDifference(name, stored: source, stored, replayed: replayed, fresh) {
            report.problems.append(problem)
          }
        } catch let e as LMDBError where e.damage != nil {
          report.problems.append("\(StoreError.reporting(e, path: path))")
        }
      }
      return report

    }
  }

  /// Walks two databases in key order and describes the first entry where they differ.
  private static func firstDifference(
    _ name: String, stored: ReadHandle, _ a: Database, replayed: ReadHandle, _ b: Database
  ) throws -> String? {
    return try stored.withCursor(a) { ca in
      return try replayed.withCursor(b) { cb in
        var moreA = try ca.first()
        var moreB = try cb.first()
        while moreA || moreB {
          guard moreA else { return "\(name): entry \(hex(try cb.key())) is missing from the store" }
          guard moreB else { return "\(name): entry \(hex(try ca.key())) is not produced by replaying the log" }
          let (ka, va) = (try ca.key(), try ca.value())
          let (kb, vb) = (try cb.key(), try cb.value())
          if ka != kb {
            return ka.lexicographicallyPrecedes(kb)
              ? "\(name): entry \(hex(ka)) is not produced by replaying the log"
              : "\(name): entry \(hex(kb)) is missing from the store"
          }
          if va != vb { return "\(name): entry \(hex(ka)) differs from the replayed value" }
          moreA = try ca.next()
          moreB = try cb.next()
        }
        return nil
      }
    }
  }

  private static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
  }
}
