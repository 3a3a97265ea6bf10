/** What a use case refuses with, for tests that assert the refusal's code and fields. */
import { ServiceError } from '../../functions/domain/common/errors.js';

/** The ServiceError `promise` rejects with (any other outcome fails the test). */
export const rejection = async (promise: Promise<unknown>): Promise<ServiceError> => {
  try {
    await promise;
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
  throw new Error('expected a ServiceError');
};
