/* global module */
'use strict';

/**
 * The kms:Decrypt entry of a role's Policies (infra/iam.yml), for a customer-managed key encrypting
 * the SecureStrings (stage parameter `secretsKmsKeyArn`): that key only, and only when SSM calls
 * it (kms:ViaService), present only under the role's condition (a key and at least one of its
 * secrets set). With no key the entry is left out of the template altogether (AWS::NoValue) rather
 * than written with an empty ARN under a condition that is never true: CloudFormation would skip
 * it, but cfn-lint checks every branch and an empty ARN is an error there (E3510).
 */
module.exports = async ({ resolveVariable }) => {
  const keyArn = await resolveVariable('param:secretsKmsKeyArn');
  const decrypt = (condition) =>
    keyArn === '' || keyArn == null
      ? { Ref: 'AWS::NoValue' }
      : {
          'Fn::If': [
            condition,
            {
              PolicyName: 'kms-decrypt-secrets',
              PolicyDocument: {
                Version: '2012-10-17',
                Statement: [
                  {
                    Effect: 'Allow',
                    Action: 'kms:Decrypt',
                    Resource: keyArn,
                    Condition: { StringEquals: { 'kms:ViaService': { 'Fn::Sub': 'ssm.${AWS::Region}.amazonaws.com' } } },
                  },
                ],
              },
            },
            { Ref: 'AWS::NoValue' },
          ],
        };
  return { devices: decrypt('DevicesDecryptsWithKmsKey'), importTickets: decrypt('ImportDecryptsWithKmsKey') };
};
