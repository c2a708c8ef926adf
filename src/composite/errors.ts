/**
 * Typed errors of the composite scorer: a configuration it refuses at construction, and a member
 * answer it cannot use (the latter only reaches a caller when every member failed).
 */
import { RelevanceGateError } from '../errors.js';

/**
 * The members or options of createCompositeScorer are unusable: a label the member does not
 * declare, a product signal fed twice, two members with one id, an unknown option key.
 * `member` is the member's id (or `members[i]` before its id is known); `field` the option path.
 */
export class CompositeConfigError extends RelevanceGateError {
  readonly field: string;
  readonly member: string | undefined;
  constructor(field: string, message: string, member?: string) {
    super('RG_ERR_COMPOSITE_CONFIG', `${field}: ${message}`);
    this.field = field;
    this.member = member;
  }
}

/** A member returned something other than one result per passage. */
export class CompositeMemberResultError extends RelevanceGateError {
  readonly member: string;
  constructor(member: string, message: string) {
    super('RG_ERR_COMPOSITE_MEMBER_RESULT', `member ${JSON.stringify(member)}: ${message}`);
    this.member = member;
  }
}
