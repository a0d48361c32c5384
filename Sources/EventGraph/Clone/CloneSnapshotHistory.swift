internal import LMDB

/// The objects and commits a snapshot with history replays.
///
/// For a subgraph the members are found from each object's own history, not from its
/// state at one time: the root, every object that was ever a target of a member's `deep`
/// relationship up to the snapshot's sequence (recursively), and every object a member
/// ever referenced. That is what the snapshot needs to show the subgraph as it was at
/// any earlier sequence, including employees since fired or moved away.
struct HistorySubgraph {
  /// `nil`: the whole store, every commit.
  let members: Set<ObjectID>?
  /// First sequences of the commits that touched a member, ascending.
  let commits: [UInt64]

  static func collect<T>(
    root: ObjectID?, end: UInt64, policy: [String: CopyPolicy], versions: inout VersionReader<T>
  ) throws -> HistorySubgraph {
    guard let root else { return HistorySubgraph(members: nil, commits: []) }
    let (entity, _) = try versions.requireRoot(root)
    let model = versions.model
    let policies = try CopyPolicyTable(model: model, overrides: policy, scope: entity)
    var members: Set<ObjectID> = [root]
    var boundary: Set<ObjectID> = []
    var queue = [root]
    var commits: Set<UInt64> = []
    var next = 0
    while next < queue.count {
      let o = queue[next]
      next += 1
      guard let e = try versions.entity(of: o) else { continue }
      for first in try versions.reader.history(o) where first <= end {
        commits.insert(first)
        for (seq, event) in try versions.commit(first).events(naming: o) {
          guard seq <= end, case .link(let subject, let rel, let target, _) = event else { continue }
          // The relationship of `o` this link is in, and the object at its other end.
          var partners: [(PropertyID, ObjectID)] = []
          if subject == o { partners.append((rel, target)) }
          if target == o, let se = try versions.entity(of: subject),
            case .relationship(let r)? = model.entity(se)?.property(rel)?.kind, let inv = r.inverse
          {
            partners.append((inv, subject))
          }
          for (r, t) in partners {
            switch policies.policy(e, r) {
            case .deep:
              boundary.remove(t)
              if members.insert(t).inserted { queue.append(t) }
            case .reference:
              if !members.contains(t) { boundary.insert(t) }
            case .skip:
              break
            }
          }
        }
      }
    }
    for o in boundary {
      members.insert(o)
      for first in try versions.reader.history(o) where first <= end { commits.insert(first) }
    }
    return HistorySubgraph(members: members, commits: commits.sorted())
  }
}

extension SnapshotWriter {
  /// Replays the members' events commit by commit, renumbered, up to sequence `end`.
  mutating func replay<T>(_ history: HistorySubgraph, end: UInt64, versions: inout VersionReader<T>) throws {
    guard let members = history.members else {
      // The whole store: every commit, as it is.
      var commits: [Commit] = []
      try versions.reader.txn.forEach(versions.reader.dbs.log, from: StoreKey.sequence(1)) { key, value in
        guard let first = KeyField.u64(key, at: 0), first <= end else { return false }
        commits.append(try CommitCodec.decode(value, context: "log entry \(first)"))
        if commits.count >= 64 {
          try replay(commits, end: end)
          commits.removeAll(keepingCapacity: true)
        }
        return true
      }
      try replay(commits, end: end)
      return
    }
    var lists = OriginalLists(members: members)
    for first in history.commits {
      let commit = try versions.commit(first).commit
      var kept: [Event] = []
      var sequences: [UInt64] = []
      for (seq, event) in commit.sequencedEvents where seq <= end {
        if let e = try lists.filter(event, versions: &versions) {
          kept.append(e)
          sequences.append(seq)
        }
      }
      try append(kept, of: commit, originals: sequences)
    }
  }

  private mutating func replay(_ commits: [Commit], end: UInt64) throws {
    for c in commits {
      let events = Array(c.sequencedEvents.prefix { $0.sequence <= end })
      try append(events.map(\.event), of: c, originals: events.map(\.sequence))
    }
  }

  private mutating func append(_ events: [Event], of commit: Commit, originals: [UInt64]) throws {
    guard !events.isEmpty else { return }
    var meta = commit.metadata
    meta.sourceCommit = commit.firstSequence
    // A truncated log's base becomes the snapshot's first commit, an ordinary one: its
    // links come in each list's order (Retention/Truncation.swift), and the snapshot's own
    // sequences and versions start there.
    meta.base = nil
    let info = try append(events, time: commit.time, metadata: meta)
    for (i, seq) in originals.enumerated() { map(seq, to: info.firstSequence + UInt64(i)) }
  }
}

/// The members' ordered lists as they are in the original, all targets included, so that
/// a link's position can be recounted among the targets the snapshot keeps.
struct OriginalLists {
  private struct Key: Hashable {
    let object: ObjectID
    let rel: PropertyID
  }
  let members: Set<ObjectID>
  private var lists: [Key: [ObjectID]] = [:]
  /// How many targets of each list the snapshot leaves out (0: positions need no recount).
  private var outsiders: [Key: Int] = [:]

  init(members: Set<ObjectID>) { self.members = members }

  /// The event as the snapshot replays it (a link's position recounted), or `nil`.
  ///
  /// `nil` when it names an object the snapshot leaves out. Every event must be passed,
  /// in order, kept or not, so that the lists follow the original.
  mutating func filter<T>(_ event: Event, versions: inout VersionReader<T>) throws -> Event? {
    switch event {
    case .insert(let o, _), .set(let o, _, _), .delete(let o), .erase(let o, _):
      return members.contains(o) ? event : nil
    case .link(let o, let rel, let t, let position):
      let kept = members.contains(o) && members.contains(t)
      let (r, back) = try relationships(o, rel, t, versions: &versions)
      var recounted = position
      if members.contains(o), r?.isOrdered == true {
        let key = Key(object: o, rel: rel)
        let count = lists[key]?.count ?? 0
        let at = min(position ?? count, count)
        if kept, position != nil, outsiders[key, default: 0] > 0 {
          let members = self.members
          recounted = lists[key]?[..<at].reduce(0) { members.contains($1) ? $0 + 1 : $0 }
        }
        insert(t, into: key, at: at)
      }
      if members.contains(t), let back, back.isOrdered {
        let key = Key(object: t, rel: back.id)
        insert(o, into: key, at: lists[key]?.count ?? 0)
      }
      return kept ? .link(o, relationship: rel, target: t, position: recounted) : nil
    case .unlink(let o, let rel, let t):
      let (r, back) = try relationships(o, rel, t, versions: &versions)
      if members.contains(o), r?.isOrdered == true { remove(t, from: Key(object: o, rel: rel)) }
      if members.contains(t), let back, back.isOrdered { remove(o, from: Key(object: t, rel: back.id)) }
      return members.contains(o) && members.contains(t) ? event : nil
    }
  }

  private mutating func insert(_ t: ObjectID, into key: Key, at i: Int) {
    lists[key, default: []].insert(t, at: i)
    if !members.contains(t) { outsiders[key, default: 0] += 1 }
  }

  private mutating func remove(_ t: ObjectID, from key: Key) {
    guard let i = lists[key]?.firstIndex(of: t) else { return }
    lists[key]?.remove(at: i)
    if !members.contains(t) { outsiders[key, default: 0] -= 1 }
  }

  /// The relationship of a link and its inverse, from the entities the two objects have.
  private func relationships<T>(_ o: ObjectID, _ rel: PropertyID, _ t: ObjectID, versions: inout VersionReader<T>)
    throws -> (Relationship?, Relationship?)
  {
    let model = versions.model
    guard let oe = try versions.entity(of: o), case .relationship(let r)? = model.entity(oe)?.property(rel)?.kind
    else { return (nil, nil) }
    guard let inv = r.inverse, let te = try versions.entity(of: t),
      case .relationship(let back)? = model.entity(te)?.property(inv)?.kind
    else { return (r, nil) }
    return (r, back)
  }
}
