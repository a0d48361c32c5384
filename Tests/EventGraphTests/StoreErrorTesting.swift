@testable import EventGraph

/// Objects written as messages name them (`Person/1`, `#7`), for the tests' expected errors.
extension StoreError.ObjectName: ExpressibleByStringInterpolation {
  public init(stringLiteral text: String) {
    if let (entity, id) = ObjectID.parse(text) {
      self.init(entity: entity, id: id)
    } else {
      self.init(entity: nil, id: ObjectID(UInt64(text.dropFirst()) ?? 0))
    }
  }
}

/// What the tests read of an error's context, whatever its shape.
extension StoreError {
  /// The words of the context that say what is wrong.
  var detail: String? {
    switch context {
    case .detail(let d), .sortKey(_, _, let d), .value(_, _, let d), .rule(_, _, _, let d), .key(_, let d): return d
    case .subject(_, _, let d), .version(_, let d), .stream(_, let d): return d
    default: return nil
    }
  }

  /// The rule a `validation` error names.
  var rule: ValidationRule? {
    guard case .rule(_, _, let rule, _) = context else { return nil }
    return rule
  }

  /// The other object an error names: a uniqueness constraint's holder, a link's target,
  /// an object's subject.
  var target: ObjectName? {
    switch context {
    case .uniqueness(_, _, _, _, let t), .link(_, _, let t), .destination(_, _, let t, _), .inverse(_, _, let t, _):
      return t
    case .subject(_, let s, _): return s
    default: return nil
    }
  }
}
