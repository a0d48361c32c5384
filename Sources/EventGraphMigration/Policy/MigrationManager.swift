import EventGraph

/// What a migration policy works with, as Core Data's `NSMigrationManager`: the source
/// objects, the destination objects being made, and the associations between them.
///
/// A manager lives for one source commit of a streaming upcast. Destination objects made
/// in ``MigrationPolicy/createDestinationInstances(for:mapping:manager:)`` are drafts; the
/// upcaster compares them with what the same source made before and writes the difference
/// as destination events, so a later change to `phone1` updates the same PhoneBook.
public final class MigrationManager {
  let context: UpcastContext
  let mapping: CompiledMapping
  /// The drafts of the current (mapping, source) pair.
  var drafts: [Draft] = []
  var draftSource: SourceObject?
  /// The destination whose relationships are being made, and its source, when the upcaster
  /// knows them already (saves reading the association back).
  var relationshipSource: (destination: ObjectID, source: ObjectID)?

  struct Draft {
    var entity: Entity
    var key: String
    var values: [(Attribute, Value?)]
    var associated: Bool
  }

  /// `$source`, bound for one source object after another: one dictionary rebound in place,
  /// where a new one per object cost an allocation each.
  private var sourceBinding: [String: QueryVariable<ObjectID>] = ["source": .object(ObjectID(0))]

  /// The variables of a mapping's expressions for `source`.
  func variables(source: ObjectID) -> [String: QueryVariable<ObjectID>] {
    sourceBinding["source"] = .object(source)
    return sourceBinding
  }

  init(context: UpcastContext, mapping: CompiledMapping) {
    self.context = context
    self.mapping = mapping
  }

  public var sourceModel: Model { mapping.sourceModel }
  public var destinationModel: Model { mapping.destinationModel }

  // MARK: - Source objects

  /// An attribute of a source object, as it is after the current source commit.
  public func value(of source: SourceObject, _ attribute: String) throws -> Value? {
    guard let e = sourceModel.entity(source.entity), let a = e.attribute(named: attribute) else {
      throw MigrationError(
        "source entity \(sourceModel.entity(source.entity)?.name ?? "?") has no attribute '\(attribute)'")
    }
    return try context.source.value(of: source.id, attribute: a.id)
  }

  /// The source objects a relationship of a source object leads to.
  public func related(_ source: SourceObject, _ relationship: String) throws -> [SourceObject] {
    guard let e = sourceModel.entity(source.entity), let r = e.relationship(named: relationship) else {
      throw MigrationError(
        "source entity \(sourceModel.entity(source.entity)?.name ?? "?") has no relationship '\(relationship)'")
    }
    return try context.source.related(to: source.id, relationship: r.id).compactMap { try context.sourceObject($0) }
  }

  // MARK: - Making destination objects (createDestinationInstances)

  /// Makes a destination object of `entity` for the current source object.
  ///
  /// `key` names it
  /// stably (the same source and key always give the same object); by default drafts are
  /// keyed by creation order.
  public func insertDestination(_ entity: String, key: String? = nil) throws -> DestinationDraft {
    guard draftSource != nil else {
      throw MigrationError("insertDestination is only available in createDestinationInstances")
    }
    guard let e = destinationModel.entity(named: entity), !e.isAbstract else {
      throw MigrationError("destination model has no concrete entity '\(entity)'")
    }
    return try insertDestination(e, key: key ?? "#\(drafts.count)")
  }

  /// Makes a draft of an entity already resolved (the default path: no name lookup), with
  /// room for `values` attribute values.
  private func insertDestination(_ e: Entity, key: String, values: Int = 0) throws -> DestinationDraft {
    if drafts.contains(where: { $0.key == key }) {
      throw MigrationError("destination key '\(key)' is used twice for one source object")
    }
    var draft = Draft(entity: e, key: key, values: [], associated: true)
    draft.values.reserveCapacity(values)
    drafts.append(draft)
    return DestinationDraft(index: drafts.count - 1)
  }

  /// Sets an attribute of a draft (converted to the attribute's type when it fits exactly).
  public func set(_ draft: DestinationDraft, _ attribute: String, _ value: Value?) throws {
    guard draft.index < drafts.count else { throw MigrationError("unknown destination draft") }
    let e = drafts[draft.index].entity
    guard let a = e.attribute(named: attribute) else {
      throw MigrationError("destination entity \(e.name) has no attribute '\(attribute)'")
    }
    var v = value
    if let value {
      do { v = try value.converted(to: a.type) } catch {
        throw MigrationError("\(e.name).\(a.name): \(error)")
      }
    }
    drafts[draft.index].values.removeAll { $0.0.id == a.id }
    drafts[draft.index].values.append((a, v))
  }

  /// Records that `destination` was made from `source` by `mapping` (every draft is
  /// associated with the object it was made for; this call is kept for the seed's code).
  public func associate(source: SourceObject, destination: DestinationDraft, mapping: CompiledEntityMapping) {
    if destination.index < drafts.count { drafts[destination.index].associated = true }
  }

  /// What a mapping with no policy does: the filter, then one object (or one per
  /// `instances` entry whose `when` holds) with every attribute expression evaluated.
  ///
  /// A required attribute whose expression gives no value takes its default, as a
  /// lightweight migration of an optional attribute made required with a default does.
  public func createDefaultDestinationInstances(for source: SourceObject, mapping m: CompiledEntityMapping) throws {
    guard let dst = m.destination else { return }
    guard !dst.isAbstract else { throw MigrationError("destination model has no concrete entity '\(dst.name)'") }
    guard draftSource != nil else {
      throw MigrationError("insertDestination is only available in createDestinationInstances")
    }
    let variables = variables(source: source.id)
    func value(_ a: Attribute, _ e: CompiledExpression) throws -> Value? {
      let v = try e.evaluate(source.id, in: context.source, variables: variables)
      return v ?? (a.isOptional ? nil : a.defaultValue)
    }
    if m.instances.isEmpty {
      let d = try insertDestination(dst, key: "", values: m.attributes.count)
      for (a, e) in m.attributes { try set(d, a, try value(a, e)) }
      return
    }
    for entry in m.instances {
      if let when = entry.when, !(try when.evaluate(source.id, in: context.source, variables: variables)) { continue }
      let d = try insertDestination(dst, key: entry.key, values: entry.attributes.count)
      for (a, e) in entry.attributes { try set(d, a, try value(a, e)) }
    }
  }

  /// Sets a draft's attribute already resolved (the default path: no name lookups).
  private func set(_ draft: DestinationDraft, _ a: Attribute, _ value: Value?) throws {
    var v = value
    if let value, value.type != a.type {
      do { v = try value.converted(to: a.type) } catch {
        throw MigrationError("\(drafts[draft.index].entity.name).\(a.name): \(error)")
      }
    }
    drafts[draft.index].values.append((a, v))
  }

  // MARK: - Relationships (createRelationships)

  /// The destination objects `mapping` made from `sources`, in source order then key order.
  public func destinationInstances(mapping name: String, sources: [SourceObject]) throws -> [ObjectID] {
    guard let m = mapping.mappings.first(where: { $0.name == name }) else {
      throw MigrationError("no entity mapping named '\(name)'")
    }
    return try sources.flatMap { try context.associations.destinations(mapping: m.index, source: $0.id).map(\.1) }
  }

  /// The source objects `mapping` made `destination` from.
  public func sourceInstances(mapping name: String, destination: ObjectID) throws -> [SourceObject] {
    guard let m = mapping.mappings.first(where: { $0.name == name }) else {
      throw MigrationError("no entity mapping named '\(name)'")
    }
    guard let s = try context.associations.source(of: destination), s.mapping == m.index else { return [] }
    return try context.sourceObject(s.source).map { [$0] } ?? []
  }

  /// The destination transaction of the current commit, for reading and linking.
  public var destination: Transaction { context.destination }

  /// Makes a destination relationship hold exactly `targets` (in order when ordered).
  public func setRelationship(_ object: ObjectID, _ relationship: String, to targets: [ObjectID]) throws {
    guard let e = try context.destination.liveEntityID(of: object).flatMap({ destinationModel.entity($0) }),
      let r = e.relationship(named: relationship)
    else {
      throw MigrationError("no destination relationship '\(relationship)' on \(context.destination.display(object))")
    }
    try context.destination.setRelationship(object, r, to: r.isToMany ? targets : Array(targets.prefix(1)))
  }

  /// What a mapping with no policy does: each relationship mapping's sources, through the
  /// mapping it names, become the destination relationship.
  public func createDefaultRelationships(for destination: ObjectID, mapping m: CompiledEntityMapping) throws {
    let known = relationshipSource.flatMap { $0.destination == destination ? $0.source : nil }
    guard let source = try known ?? context.associations.source(of: destination)?.source,
      try context.sourceObject(source) != nil
    else { return }
    let variables = variables(source: source)
    for (r, target, sourcesExpression, perObject) in m.relationships {
      let sources = try sourcesExpression.evaluateObjects(source, in: context.source, variables: variables)
      var targets: [ObjectID] = []
      for o in sources {
        var t = target
        if perObject, let e = try context.sourceObject(o)?.entity,
          let k = mapping.identityMapping(for: e, making: r.destination)
        {
          t = k
        }
        targets += try context.associations.destinations(mapping: t, source: o).map(\.1)
      }
      try context.destination.setRelationship(destination, r, to: r.isToMany ? targets : Array(targets.prefix(1)))
    }
  }
}
