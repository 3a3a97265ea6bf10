/**
 * The one SNS topic that every alarm of the stack notifies: an existing topic (alarmTopicArn), or
 * one this stack creates for an email address (alarmEmail). Given both, the address subscribes to
 * the existing topic, so there is still one topic.
 *
 * A topic created here is TLS-only and encrypted with its own KMS key. CloudWatch cannot publish
 * to a topic encrypted with the AWS managed key (alias/aws/sns), and publishing to one with a
 * topic policy needs that policy to allow it: both grants are made here, and without them the
 * alarms would still change state while their notifications are silently dropped.
 */
import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

export interface AlarmTopicProps {
  /**
   * An existing topic to notify. Its policy (and its key's, if encrypted) must let
   * cloudwatch.amazonaws.com publish; this stack does not change it.
   * @default a new topic, when `email` is given
   */
  readonly existingTopicArn?: string;
  /**
   * An address to subscribe to the topic. AWS mails it a confirmation link first: nothing is
   * delivered until it is followed.
   * @default no subscription
   */
  readonly email?: string;
  /**
   * What happens to a created topic's key when the stack is deleted.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

export class AlarmTopic extends Construct {
  /** The topic, or undefined when neither an existing topic nor an email address is given. */
  static maybe(scope: Construct, id: string, props: AlarmTopicProps): AlarmTopic | undefined {
    return props.existingTopicArn || props.email ? new AlarmTopic(scope, id, props) : undefined;
  }

  readonly topic: ITopic;
  /** The action to add to an alarm (its ALARM state notifies the topic). */
  readonly action: SnsAction;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    if (props.email !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(props.email)) {
      throw new Error(`alarmEmail must be an email address, got ${JSON.stringify(props.email)}`);
    }
    this.topic = props.existingTopicArn
      ? Topic.fromTopicArn(this, 'Topic', props.existingTopicArn)
      : this.createTopic(props.removalPolicy ?? RemovalPolicy.RETAIN);
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));
    this.action = new SnsAction(this.topic);
  }

  private createTopic(removalPolicy: RemovalPolicy): Topic {
    const key = new Key(this, 'Key', {
      description: 'Encrypts the PDF render service alarm topic',
      enableKeyRotation: true,
      removalPolicy,
    });
    const topic = new Topic(this, 'Topic', {
      displayName: 'PDF render service alarms',
      masterKey: key,
      enforceSSL: true,
    });
    const cloudWatch = new ServicePrincipal('cloudwatch.amazonaws.com');
    // CloudWatch calls KMS itself when it publishes. grantPublish below also grants the key, but
    // under the topic's aws:SourceArn condition; this is the unconditioned form AWS documents for
    // alarm topics, so delivery does not hang on that key being present in KMS's request context.
    // Who may publish is decided by the topic policy.
    key.grant(cloudWatch, 'kms:Decrypt', 'kms:GenerateDataKey*');
    // Only this account's alarms may publish (confused-deputy protection).
    topic.grantPublish(
      cloudWatch.withConditions({
        ArnLike: {
          'aws:SourceArn': Stack.of(this).formatArn({
            service: 'cloudwatch',
            resource: 'alarm',
            resourceName: '*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        },
      }),
    );
    return topic;
  }
}
