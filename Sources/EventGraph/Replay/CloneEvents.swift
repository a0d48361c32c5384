import Foundation

/// Turns a collected subgraph into events: every object's insert and values first, then
/// every link once, in an order that rebuilds ordered relationships exactly on both sides.
///
/// A link is one event, and the projection keeps the inverse, so the inverses of the
/// copy come out right by construction. The only care needed is order: a link event
/// places its target at a position in one list and appends to the inverse list. The
/// lists are replayed one by one (members in order, relationships in model order); a
/// link between two members is emitted when the second of its two lists is replayed,
/// as an append to that list and a placement in the other. A list is therefore empty
/// when its own turn comes, receives its appends in order, and gets the rest of its
/// targets later at positions counted among those already there. This works for every
/// mix of to-one, to-many, ordered and self-referencing relationships, with one event per
/// link and no moves.
struct SubgraphEvents {
  /// Which links the replay keeps.
  enum Links {
    /// A clone: a link between two members is kept when either side's policy is not
    /// `skip`; a link to an object outside the subgraph only under `reference`.
    case policies(CopyPolicyTable)
    /// A snapshot: every link between two members, and nothing else.
    case restriction
  }

  let model: Model
  let graph: Subgraph
  let links: Links
  /// The identity each member gets, by index in ``Subgraph/ids``.
  let identities: [ObjectID]

  // MARK: - Objects

  /// Emits each member's insert and attribute values; `override` may replace a value.
  func emitObjects(
    override: ((_ member: Int, _ entity: Entity, _ attribute: Attribute) throws -> Value??)? = nil,
    _ emit: (Event) throws -> Void
  ) throws {
    for (i, v) in graph.versions.enumerated() {
      let id = identities[i]
      guard let entity = model.entity(v.state.entity) else {
        throw StoreError.corrupt("unknown entity id \(v.state.entity.rawValue)")
      }
      try emit(.insert(id, entity: entity.id))
      for a in entity.attributes {
        var value = v.state[a.id]
        if let override, let replaced = try override(i, entity, a) { value = replaced }
        if let value { try emit(.set(id, attribute: a.id, value: value)) }
      }
    }
  }

  // MARK: - Links

  private struct ListKey: Hashable {
    let member: Int
    let rel: PropertyID
  }

  /// Emits the links, each once, after ``emitObjects(override:_:)``.
  func emitLinks(_ emit: (Event) throws -> Void) throws {
    var replayed: Set<ListKey> = []
    var placed = OrderedPlacements<ListKey>()
    var indexes = ListIndexes<ListKey>()
    for (y, v) in graph.versions.enumerated() {
      guard let entity = model.entity(v.state.entity) else { continue }
      for r in entity.relationships {
        let keyY = ListKey(member: y, rel: r.id)
        defer { replayed.insert(keyY) }
        guard let targets = v.relationships[r.id] else { continue }
        for (i, t) in targets.enumerated() {
          guard let x = graph.index(of: t) else {
            // Outside the subgraph: the copy shares the target (checked before).
            guard case .policies(let p) = links, p.policy(entity.id, r.id) == .reference else { continue }
            let position = r.isOrdered ? placed.place(keyY, index: i) : nil
            try emit(.link(identities[y], relationship: r.id, target: t, position: position))
            continue
          }
          let xEntity = graph.versions[x].state.entity
          guard let inv = r.inverse, case .relationship(let back)? = model.entity(xEntity)?.property(inv)?.kind
          else {
            // One way: only this list holds the link.
            if case .policies(let p) = links, p.policy(entity.id, r.id) == .skip { continue }
            let position = r.isOrdered ? placed.place(keyY, index: i) : nil
            try emit(.link(identities[y], relationship: r.id, target: identities[x], position: position))
            continue
          }
          if case .policies(let p) = links, p.policy(entity.id, r.id) == .skip, p.policy(xEntity, inv) == .skip {
            continue
          }
          let keyX = ListKey(member: x, rel: inv)
          guard replayed.contains(keyX) else { continue }  // emitted in keyX's turn, which comes later
          // Appended to this list (keyY); placed among what the other list has so far.
          var position: Int? = nil
          if back.isOrdered {
            guard let j = indexes.index(of: v.state.id, in: keyX, list: graph.versions[x].relationships[inv] ?? [])
            else {
              throw StoreError.corrupt("\(model.entity(xEntity)?.name ?? "?")/\(t.rawValue).\(back.name) lacks its inverse")
            }
            position = placed.place(keyX, index: j)
          }
          if r.isOrdered { _ = placed.place(keyY, index: i) }
          try emit(.link(identities[x], relationship: inv, target: identities[y], position: position))
        }
      }
    }
  }
}

/// For each ordered list, the original indices of the targets replayed so far, sorted:
/// a target's position is the number replayed before it in the original order.
struct OrderedPlacements<Key: Hashable> {
  private var filled: [Key: [Int]] = [:]

  /// Records that the target at `index` of the original list is replayed now, and
  /// returns the position it takes among those replayed so far.
  mutating func place(_ key: Key, index: Int) -> Int {
    Self.insert(index, into: &filled[key, default: []])
  }

  private static func insert(_ index: Int, into list: inout [Int]) -> Int {
    // Lists are mostly replayed in order: append without searching.
    guard let last = list.last, last > index else {
      list.append(index)
      return list.count - 1
    }
    var lo = 0
    var hi = list.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if list[mid] < index { lo = mid + 1 } else { hi = mid }
    }
    list.insert(index, at: lo)
    return lo
  }
}

/// Where an object stands in a list, with a dictionary built for long lists only.
struct ListIndexes<Key: Hashable> {
  private var built: [Key: [ObjectID: Int]] = [:]

  mutating func index(of id: ObjectID, in key: Key, list: [ObjectID]) -> Int? {
    if list.count <= 32 { return list.firstIndex(of: id) }
    if let table = built[key] { return table[id] }
    var table: [ObjectID: Int] = [:]
    table.reserveCapacity(list.count)
    for (i, o) in list.enumerated() { table[o] = i }
    built[key] = table
    return table[id]
  }
}
