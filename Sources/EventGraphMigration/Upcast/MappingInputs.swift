import EventGraph

/// What an entity mapping's outcome for one source object depends on, so that an upcast
/// runs a mapping only for the source objects a commit can have changed it for.
///
/// Only mappings with no policy are known this well: a policy may read and write anything
/// (even another mapping's destinations), so when a step has one, every stage of every
/// mapping runs for every affected source object.
struct MappingInputs {
  /// The source attributes the filter and the value expressions read, when they read
  /// nothing but the source object's own attributes; `nil`: anything.
  let instanceAttributes: AttributeSet?
  /// Whether every relationship mapping takes its sources from `$source` itself, so that
  /// the destination relationship changes only when the associations of the source do.
  let relationshipsFromSelf: Bool

  /// The inputs of each of a step's entity mappings, by mapping index.
  static func of(_ mapping: CompiledMapping) -> [MappingInputs] {
    let hasPolicy = mapping.mappings.contains { $0.policy != nil }
    return mapping.mappings.map { MappingInputs($0, known: !hasPolicy) }
  }

  private init(_ m: CompiledEntityMapping, known: Bool) {
    let selves: Set<String> = ["source"]
    guard known else {
      instanceAttributes = nil
      relationshipsFromSelf = false
      return
    }
    var read: Set<PropertyID>? = m.filter.map { $0.ownAttributes(selves: selves) } ?? []
    func add(_ more: Set<PropertyID>?) {
      guard let r = read, let more else {
        read = nil
        return
      }
      read = r.union(more)
    }
    for (_, e) in m.attributes { add(e.ownAttributes(selves: selves)) }
    for entry in m.instances {
      if let when = entry.when { add(when.ownAttributes(selves: selves)) }
      for (_, e) in entry.attributes { add(e.ownAttributes(selves: selves)) }
    }
    instanceAttributes = read.map(AttributeSet.init)
    relationshipsFromSelf = m.relationships.allSatisfy { !$0.perObject && $0.sources.isSelf(selves: selves) }
  }
}

/// What one commit's events changed, per object, for ``MappingInputs``.
struct CommitChanges {
  /// Objects inserted or deleted by the commit.
  private(set) var remade: Set<ObjectID> = []
  /// The attributes each object had set.
  private(set) var attributes: [ObjectID: AttributeSet] = [:]
  /// The (mapping, source) pairs whose destinations were made or deleted in the commit.
  var associationsChanged: Set<MappingSource> = []

  init(_ events: [Event]) {
    // A commit's events on one object mostly come one after another: one hash per run.
    var run: (object: ObjectID, set: AttributeSet)?
    for e in events {
      switch e {
      case .insert(let o, _), .delete(let o): remade.insert(o)
      case .set(let o, let a, _):
        if let r = run, r.object != o { attributes[r.object, default: AttributeSet()].formUnion(r.set) }
        if run?.object != o { run = (o, AttributeSet()) }
        run?.set.insert(a)
      case .link, .unlink, .erase: break
      }
    }
    if let r = run { attributes[r.object, default: AttributeSet()].formUnion(r.set) }
  }

  /// Whether the mapping's destinations for `s` may differ from what it made before.
  func mayChangeInstances(_ inputs: MappingInputs, of s: ObjectID) -> Bool {
    guard let read = inputs.instanceAttributes, !remade.contains(s) else { return true }
    guard let set = attributes[s] else { return false }
    return set.meets(read)
  }

  /// Whether the destination relationships `m` makes for `s` may differ from what they are.
  func mayChangeRelationships(_ m: CompiledEntityMapping, _ inputs: MappingInputs, of s: ObjectID) -> Bool {
    guard inputs.relationshipsFromSelf, !remade.contains(s) else { return true }
    if associationsChanged.contains(MappingSource(mapping: m.index, source: s)) { return true }
    return m.relationships.contains { associationsChanged.contains(MappingSource(mapping: $0.target, source: s)) }
  }
}

/// A set of attribute identifiers that errs on the side of meeting another: exact below 64,
/// one flag for every identifier above.
struct AttributeSet {
  private var low: UInt64 = 0
  private var high = false

  init() {}

  init(_ ids: Set<PropertyID>) {
    for id in ids { insert(id) }
  }

  mutating func insert(_ id: PropertyID) {
    if id.rawValue < 64 { low |= 1 << UInt64(id.rawValue) } else { high = true }
  }

  mutating func formUnion(_ other: AttributeSet) {
    low |= other.low
    high = high || other.high
  }

  /// Whether the two sets may share an identifier.
  func meets(_ other: AttributeSet) -> Bool { low & other.low != 0 || (high && other.high) }
}

/// An entity mapping and one of its source objects.
struct MappingSource: Hashable {
  let mapping: Int
  let source: ObjectID
}
