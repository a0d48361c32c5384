import Foundation
internal import LMDB

/// What ``EventStore/salvage(at:into:progress:)`` recovered, and what it could not.
public struct SalvageReport: Sendable, Hashable {
  /// The LMDB transaction of the meta page the log was read from.
  public var transaction: UInt64 = 0
  /// Whether that was not the newest meta page: the other one is damaged (its last
  /// transaction is lost), or its log is shorter.
  public var usedOlderMetaPage = false
  public var modelVersion = 0
  public var commits = 0
  public var events = 0
  /// The last sequence recovered (0 when none).
  public var lastSequence: UInt64 = 0
  /// Commits the damaged log recorded beyond those recovered, by its tree's own count.
  public var commitsLost = 0
  /// Why the recovery stopped before the log's recorded end; `nil` when it recovered every
  /// commit the log recorded.
  public var stoppedBecause: String?
  /// Commits recovered from pages no tree of a meta page reaches (older copies of log pages,
  /// or the pages of a transaction whose meta page is lost), after the tree's own; included
  /// in ``commits``.
  public var foundByScan = 0
  /// Why the salvage cannot tell whether commits after ``lastSequence`` were lost; `nil` when
  /// it can (a meta page is damaged: the transaction it recorded is lost with it, and so
  /// where the log ended).
  public var lossUnknown: String?
  /// Whether every commit the store had is recovered, as far as the salvage can prove.
  public var isComplete: Bool { stoppedBecause == nil && lossUnknown == nil }
  /// Model versions the store held besides the active one; their logs are not carried.
  public var versionsLeftBehind: [Int] = []
  /// Checkpoints and consumer positions the store held; not carried, since they may
  /// point past the recovered log.
  public var checkpointsLeftBehind: [String] = []
}

extension EventStore {
  /// Writes a new, verified store at `out` from every commit record of `path`'s active log
  /// that still passes its checksum, in order, stopping where the log cannot be followed.
  ///
  /// The damaged store is read with ordinary reads, never through LMDB's map, from
  /// whichever meta page gives the longer log. Where that log's tree ends short of what the
  /// store committed — a damaged record, or a damaged newest meta page whose transaction is
  /// lost with it — every page of the file is scanned for commit records that pass their
  /// checksum, are of the active model version and follow the log (older copies of a log
  /// page, the pages of the lost transaction), and the log is carried on with them: as far
  /// as the newest meta page's tree counts commits when both meta pages are intact (never
  /// past it: pages beyond a transaction that never committed are not the store's), as far
  /// as they follow one another when a meta page is lost — and then the report says that
  /// the loss cannot be known (``SalvageReport/lossUnknown``). The new store keeps the
  /// store's identity, its active model and every recovered commit byte for byte; its
  /// projections are made by replaying them.
  ///
  /// - Parameters:
  ///   - path: the damaged store's directory.
  ///   - out: the new store's directory, which must not exist.
  ///   - progress: called with the commits recovered so far.
  /// - Throws: ``ErrorCode/damaged`` when neither meta page, or neither
  ///   version of the store's metadata, can be read; the new store's errors.
  public static func salvage(at path: String, into out: String, progress: (Int) -> Void = { _ in }) throws
    -> SalvageReport
  {
    return try StoreError.reportingStorage(path: path) {
      let dataFile = path + "/data.mdb"
      let snapshots = try FileSnapshot.all(dataFile: dataFile)
      var best: (snapshot: FileSnapshot, origin: Origin, prefix: LogPrefix)?
      var failures: [String] = []
      for snapshot in snapshots {
        do {
          let origin = try Origin(snapshot)
          let prefix = try LogPrefix(snapshot, version: origin.model.version)
          if best == nil || prefix.commits > best?.prefix.commits ?? 0 { best = (snapshot, origin, prefix) }
        } catch {
          failures.append("meta page \(snapshot.meta.index) (transaction \(snapshot.meta.transaction)): \(error)")
        }
      }
      guard let best else {
        let detail = failures.isEmpty ? "neither meta page is intact" : failures.joined(separator: "; ")
        throw StoreError.damaged(path: path, detail: "\(dataFile) cannot be salvaged: \(detail)")
      }
      let store = try EventStore.create(at: out, model: best.origin.model, storeID: best.origin.storeID)
      var report = SalvageReport()
      report.transaction = best.snapshot.meta.transaction
      let damagedMetaPages = try PageCheck.metaPages(dataFile: dataFile).compactMap { meta -> Int? in
        guard case .failure(let damage) = meta else { return nil }
        return damage.page ?? 0
      }
      report.usedOlderMetaPage =
        !damagedMetaPages.isEmpty || best.snapshot.meta.transaction != snapshots.first?.meta.transaction
      report.modelVersion = best.origin.model.version
      report.versionsLeftBehind = best.origin.otherVersions
      report.checkpointsLeftBehind = best.origin.checkpoints
      // The same prefix again, appended in chunks as it is read.
      var chunk: [CommitRecord] = []
      func flush() throws {
        guard !chunk.isEmpty else { return }
        try store.appendCommitRecords(chunk)
        report.commits += chunk.count
        chunk.removeAll(keepingCapacity: true)
        progress(report.commits)
      }
      let version = best.origin.model.version
      let prefix = try LogPrefix(best.snapshot, version: version) { record in
        chunk.append(record)
        if chunk.count >= 1_000 { try flush() }
      }
      // How many commits the store had: the newest meta page's count when both are intact.
      let committed: Int? =
        damagedMetaPages.isEmpty
        ? snapshots.first.flatMap { try? $0.databases()[StoreDatabases.name("log", version: version)] }.map(Int.init)
        : nil
      var end = LogEnd(commit: prefix.lastCommit, sequence: prefix.lastSequence)
      var stoppedBecause = prefix.stoppedBecause
      if committed.map({ prefix.commits < $0 }) ?? true {
        let found = try ScannedRecords(
          dataFile: dataFile, pageSize: best.snapshot.meta.pageSize, version: version, after: end.sequence
        )
        .follow(from: end, upTo: committed.map(UInt64.init)) { record in
          chunk.append(record)
          if chunk.count >= 1_000 { try flush() }
        }
        report.foundByScan = Int(found.end.commit - end.commit)
        end = found.end
        // Why the log ends where it does: where the scan stopped, once it carried the log on.
        stoppedBecause =
          report.foundByScan > 0
          ? found.stoppedBecause ?? stoppedBecause : stoppedBecause ?? found.stoppedBecause
      }
      try flush()
      report.events = Int(end.sequence)
      report.lastSequence = end.sequence
      let recorded = max(committed ?? 0, prefix.recorded)
      report.commitsLost = max(0, recorded - Int(end.commit))
      report.stoppedBecause = report.commitsLost > 0 ? stoppedBecause : nil
      if committed == nil {
        let pages = damagedMetaPages.map(String.init).joined(separator: " and ")
        let why =
          damagedMetaPages.isEmpty
          ? "the newest meta page's trees cannot be read, so the log's end is not known"
          : "meta page \(pages) is damaged, and the transaction it recorded is lost with it"
        report.lossUnknown =
          why
          + (report.foundByScan > 0
            ? "; \(report.foundByScan) commit(s) after sequence \(prefix.lastSequence) were found by scanning the file, which cannot tell whether their transaction committed"
            : "")
      }
      return report

    }
  }
}

/// What a salvage takes from the store's `meta` and `models` databases.
private struct Origin {
  let model: Model
  let storeID: String?
  let otherVersions: [Int]
  let checkpoints: [String]

  init(_ snapshot: FileSnapshot) throws {
    var meta: [String: [UInt8]] = [:]
    try snapshot.entries(of: "meta") { k, v in
      meta[String(decoding: k, as: UTF8.self)] = v
      return true
    }
    guard let active = meta[MetaKey.activeVersion].flatMap(MetaKey.number)
    else { throw StoreError.corrupt("the metadata names no active model version") }
    var versions: [Int: [UInt8]] = [:]
    try snapshot.entries(of: "models") { k, v in
      if let version = bigEndian(k) { versions[Int(version)] = v }
      return true
    }
    guard let document = versions[active] else { throw StoreError.corrupt("model version \(active) is missing") }
    self.model = try Model(json: document, file: "stored model v\(active)")
    self.storeID = meta[MetaKey.storeID].map { String(decoding: $0, as: UTF8.self) }
    self.otherVersions = versions.keys.filter { $0 != active }.sorted()
    var kept = meta.keys.filter { $0.hasPrefix("checkpoint.") }.map { String($0.dropFirst("checkpoint.".count)) }
    if (try snapshot.databases())[StoreDatabases.name("consumers", version: active)] != nil {
      kept.append("(consumer positions)")
    }
    self.checkpoints = kept.sorted()
  }
}

/// The longest run of commit records from the start of a log that pass their checksums
/// and follow one another.
private struct LogPrefix {
  private(set) var commits = 0
  private(set) var lastSequence: UInt64 = 0
  /// The number of the last commit kept (a truncated log's base has the number of the last
  /// commit it replaced).
  private(set) var lastCommit: UInt64 = 0
  /// The commits the log's tree records.
  private(set) var recorded = 0
  private(set) var stoppedBecause: String?

  /// Reads the prefix, handing each record to `keep`.
  init(_ snapshot: FileSnapshot, version: Int, keep: (CommitRecord) throws -> Void = { _ in }) throws {
    let name = StoreDatabases.name("log", version: version)
    recorded = Int(try snapshot.databases()[name] ?? 0)
    var last = LogEnd(commit: 0, sequence: 0)
    do {
      try snapshot.entries(of: name) { key, value in
        let sequence = bigEndian(key) ?? 0
        let record: CommitRecord
        do {
          record = try CommitRecord(verified: value, key: sequence)
        } catch {
          stoppedBecause = "\(error)"
          return false
        }
        let startsTruncatedLog = last == LogEnd(commit: 0, sequence: 0) && record.isBase
        guard startsTruncatedLog || (record.number == last.commit + 1 && record.firstSequence == last.sequence + 1)
        else {
          stoppedBecause =
            "log entry \(sequence): commit \(record.number) does not follow commit \(last.commit), which ended at sequence \(last.sequence)"
          return false
        }
        try keep(record)
        last = LogEnd(commit: record.number, sequence: record.lastSequence)
        commits += 1
        return true
      }
    } catch let damage as FileDamage {
      stoppedBecause = damage.description
    }
    lastSequence = last.sequence
    lastCommit = last.commit
    if stoppedBecause == nil && commits < recorded {
      stoppedBecause = "the log's tree records \(recorded) commits but holds \(commits)"
    }
  }
}

/// The commit records of one model version that any leaf page of the file holds, after a
/// sequence: each passed its checksum and lies under its first sequence.
private struct ScannedRecords {
  /// The distinct records found under each key (more than one would make the log ambiguous).
  private var byKey: [UInt64: [CommitRecord]] = [:]

  init(dataFile: String, pageSize: Int, version: Int, after sequence: UInt64) throws {
    try LeafScan(dataFile: dataFile, pageSize: pageSize).entries { key, value in
      guard let key = bigEndian(key), key > sequence, let record = try? CommitRecord(verified: value, key: key),
        record.modelVersion == version, byKey[key]?.contains(record) != true
      else { return }
      byKey[key, default: []].append(record)
    }
  }

  /// Hands `keep` the records that follow `start` one after another, up to commit `limit`.
  func follow(from start: LogEnd, upTo limit: UInt64?, _ keep: (CommitRecord) throws -> Void) rethrows -> (
    end: LogEnd, stoppedBecause: String?
  ) {
    var end = start
    while limit.map({ end.commit < $0 }) ?? true {
      let next = end.sequence + 1
      guard let found = byKey[next] else {
        return (end, "no intact record of commit \(end.commit + 1) (sequence \(next)) is left in the file")
      }
      guard found.count == 1, let record = found.first else {
        return (end, "the file holds \(found.count) different records starting at sequence \(next)")
      }
      guard record.number == end.commit + 1 else {
        return (end, "the record found at sequence \(next) is of commit \(record.number), not \(end.commit + 1)")
      }
      try keep(record)
      end = LogEnd(commit: record.number, sequence: record.lastSequence)
    }
    return (end, nil)
  }
}

/// A key of eight big-endian bytes, as the log and the models are keyed.
private func bigEndian(_ key: [UInt8]) -> UInt64? {
  guard key.count == 8 else { return nil }
  return key.reduce(0) { $0 << 8 | UInt64($1) }
}
