/// Checks the rules of the model on the objects a commit touched: required attributes
/// have a value, required relationships are not empty, counts are within min/max.
struct Validator<G: GraphReading> {
  let model: Model
  let graph: G

  func validate(_ objects: [ObjectID]) throws {
    // Each entity's required attributes and its relationships, found once per call, not
    // per object; the last entity's are at hand (objects of one entity come in runs).
    typealias Rules = (attributes: [Attribute], relationships: [Relationship])
    var rules: [EntityID: Rules] = [:]
    var last: (entity: EntityID, rules: Rules)?
    for id in objects {
      guard let s = try graph.object(id) else { continue }  // deleted
      if last?.entity != s.entity {
        if rules[s.entity] == nil, let e = model.entity(s.entity) {
          rules[s.entity] = (e.attributes.filter { !$0.isOptional }, e.relationships)
        }
        guard let found = rules[s.entity] else { continue }
        last = (s.entity, found)
      }
      guard let (attributes, relationships) = last?.rules else { continue }
      for a in attributes where s[a.id] == nil {
        throw StoreError.validation(
          object: graph.display(id), property: a.name, message: "required attribute has no value")
      }
      for r in relationships {
        let count = try graph.related(id, r.id).count
        if !r.isOptional && count == 0 {
          throw StoreError.validation(
            object: graph.display(id), property: r.name, message: "required relationship is empty")
        }
        if let lo = r.minCount, count < lo, count > 0 || !r.isOptional {
          throw StoreError.validation(
            object: graph.display(id), property: r.name, message: "has \(count) objects, fewer than minCount \(lo)")
        }
        if let hi = r.maxCount, count > hi {
          throw StoreError.validation(
            object: graph.display(id), property: r.name, message: "has \(count) objects, more than maxCount \(hi)")
        }
      }
    }
  }
}
